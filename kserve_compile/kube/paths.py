"""``FindCommonParentPath`` (kserve/kserve ``pkg/utils/storage.go``): the one implementation every caller uses.

KServe's function, step by step: no paths give ``""``; one path is returned as given (not cleaned); otherwise each
path is trimmed of every leading and trailing ``/`` and split on ``/`` (inner empty components kept, as Go's
``strings.Split`` keeps them), and the leading whole components all paths share are joined under ``/`` — ``/`` when
they share none. A path that trims to nothing (``/``, ``//``) has no components: when every path is such, Go's
``minLength`` stays -1 and the result is ``/``; when another path has components, Go indexes the empty one and
panics (``index out of range [0] with length 0``) — :class:`CommonParentPanic` here, which each caller turns into
its own error for the object.
"""

from __future__ import annotations

from collections.abc import Sequence


class CommonParentPanic(ValueError):
    """The input on which KServe's ``FindCommonParentPath`` panics; ``path`` is the offending one."""

    def __init__(self, path: str) -> None:
        super().__init__("KServe's FindCommonParentPath panics on it: index out of range [0] with length 0")
        self.path = path


def find_common_parent_path(paths: Sequence[str]) -> str:
    """The longest leading directory every path shares, as KServe computes it (see the module docstring)."""
    if not paths:
        return ""
    if len(paths) == 1:
        return paths[0]
    components = [_components(path) for path in paths]
    if any(components):
        empty = next((path for path, parts in zip(paths, components) if not parts), None)
        if empty is not None:
            raise CommonParentPanic(empty)
    common: list[str] = []
    for level in zip(*components):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/" + "/".join(common) if common else "/"


def _components(path: str) -> list[str]:
    trimmed = path.strip("/")
    return trimmed.split("/") if trimmed else []
