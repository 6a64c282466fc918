"""Fixed object shapes as data: YAML skeletons in ``templates/``, parsed once and handed out as deep copies."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ..datacopy import clone

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _load(name: str) -> Any:
    text = (Path(__file__).parent.parent / "templates" / f"{name}.yaml").read_text("utf-8")
    return yaml.load(text, Loader=_Loader)


def skeleton(name: str) -> Any:
    """A fresh copy of ``templates/<name>.yaml``."""
    return clone(_load(name))


def shared_skeleton(name: str) -> Any:
    """``templates/<name>.yaml`` itself, shared by every caller: read it, copy what goes into an object."""
    return _load(name)
