"""Emission: rendered objects → deterministic YAML, JSON, or a directory of files.

The caller orders objects with :func:`sort_objects` first; every emitter writes mapping keys
sorted and lists in their order, and nothing it writes depends on time.

``dump_yaml`` starts every document (the first too) with a ``---`` line, as ``helm template``
does, so streams concatenate safely and ``kubectl apply -f -`` takes them as they are.
``dump_json`` prints one object as itself and several as a ``v1`` ``List``, like
``kubectl get -o json``. ``explain`` writes the same YAML with each value's origin as a comment; ``diff``, per-object unified diffs of two
sets of objects (the offline and the cluster diff). ``write_output_dir`` writes ``kind[.group]_namespace_name.yaml`` files and
a ``kustomization.yaml`` listing them in apply order (with ``sortOptions: {order: fifo}`` so kustomize keeps it).
"""

from typing import Any

from kserve_compile.emit.json_text import dump_json
from kserve_compile.emit.order import APPLY_FIRST, object_ref, sort_objects
from kserve_compile.emit.yaml_text import dump_yaml

_OUTDIR_NAMES = ("OUTPUT_DIR_MARKER", "Changes", "object_file_name", "output_dir_changes", "write_output_dir")


def __getattr__(name: str) -> Any:
    # --output-dir's writer (hashing, file I/O) loads only when used: a plain render starts ~15 ms sooner
    if name in _OUTDIR_NAMES:
        from kserve_compile.emit import outdir

        return getattr(outdir, name)
    raise AttributeError(name)


__all__ = [
    # modules
    "diff",
    "explain",
    "order",
    "yaml_text",
    # names
    "APPLY_FIRST",
    "OUTPUT_DIR_MARKER",
    "Changes",
    "dump_json",
    "dump_yaml",
    "object_file_name",
    "object_ref",
    "output_dir_changes",
    "sort_objects",
    "write_output_dir",
]
