"""KServe's shipped defaults, embedded in the package: the ``inferenceservice-config`` ConfigMap, the
ClusterServingRuntimes (``runtimes/``), the default ClusterStorageContainer and the LLMInferenceServiceConfig presets
(``llmisvc/``), as parsed data.

The YAML files under ``data/`` are the source. ``data/embedded.json`` holds the same documents parsed, because
every run reads them: the YAML costs ~10 ms of the 200 ms a one-isvc ``render`` may take from process start, the
JSON a fiftieth of that. ``python -m kserve_compile.embedded`` rewrites it from the YAML;
``tests/data/test_embedded_bundle.py`` fails when it is stale.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import orjson

# The package's data files, read from its directory (it is installed as files, never run from a zip).
DATA = Path(__file__).parent / "data"
BUNDLE = "embedded.json"
CONFIGMAP = "inferenceservice-config.yaml"
STORAGE_CONTAINERS = "storagecontainers.yaml"
RUNTIMES = "runtimes"
PRESETS = "llmisvc"


def source_files() -> list[str]:
    """The bundled YAML files, as paths relative to ``data/``, in a stable order."""
    listed = [CONFIGMAP, STORAGE_CONTAINERS]
    for folder in (RUNTIMES, PRESETS):
        listed += sorted(f"{folder}/{e.name}" for e in (DATA / folder).iterdir() if e.name.endswith(".yaml"))
    return listed


def parse_sources() -> dict[str, list[Any]]:
    """Every source file's documents, read from the YAML (what the bundle must equal)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = {}
    for path in source_files():
        text = (DATA / path).read_text("utf-8")
        out[path] = [doc for doc in yaml.load_all(text, Loader=loader) if doc is not None]
    return out


def bundle_bytes() -> bytes:
    """The bundle's content: one document list per file, keys in the order the YAML writes them."""
    return orjson.dumps(parse_sources(), option=orjson.OPT_INDENT_2) + b"\n"


@cache
def _bundle() -> dict[str, list[Any]]:
    return orjson.loads((DATA / BUNDLE).read_bytes())


def documents(path: str) -> list[Any]:
    """The documents of ``data/<path>`` (shared: callers copy before they change anything)."""
    return _bundle()[path]


def has(path: str) -> bool:
    """Whether ``data/<path>`` is one of the bundled files."""
    return path in _bundle()


def runtime_files() -> list[str]:
    """The ClusterServingRuntime files (``runtimes/<name>.yaml``), sorted by name."""
    return sorted(path for path in _bundle() if path.startswith(f"{RUNTIMES}/"))


if __name__ == "__main__":
    (DATA / BUNDLE).write_bytes(bundle_bytes())
    print(f"wrote {DATA / BUNDLE}", file=sys.stderr)
