"""``--output-dir``: one file per object plus a ``kustomization.yaml``, kept stable for Git.

Each file is named after its object alone — ``<kind>[.<group>]_<namespace>_<name>.yaml`` — so adding or removing an
InferenceService touches only its own files; the apply order lives in ``kustomization.yaml`` (``resources`` in
order, ``sortOptions: {order: fifo}``), not in the names.

The directory may hold other files (a README, a ``.gitkeep``): they are never touched. What kserve-compile wrote is
known from its ``kustomization.yaml``, which starts with :data:`OUTPUT_DIR_MARKER` and lists exactly the files of the
last render; each of those files starts with the marker too. A later render removes the listed files it no longer
renders, and refuses to overwrite a file it did not write.

Writing is staged: every new or changed file is first written under a hidden temporary name next to its target, and
only when all are on disk are they renamed into place (each rename atomic), the kustomization last, then stale files
removed. A failure while staging leaves the previous render exactly as it was. Unchanged files are not rewritten.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kserve_compile.constants import OUTPUT_DIR_MARKER
from kserve_compile.emit.order import identity
from kserve_compile.emit.yaml_text import dump_yaml, yaml_document
from kserve_compile.errors import UsageError

KUSTOMIZATION = "kustomization.yaml"
_KUSTOMIZATION_HEADER = f"{OUTPUT_DIR_MARKER} --output-dir: lists the files it wrote, in apply order; do not edit.\n"
_FILE_HEADER = f"{OUTPUT_DIR_MARKER}; do not edit.\n"
_UNSAFE = re.compile(r"[^a-z0-9.-]+")
_MAX_STEM = 200  # file names stay well under the usual 255-byte limit
_TMP_INFIX = ".kserve-compile-tmp-"


def object_file_name(obj: Mapping) -> str:
    """``<kind>[.<group>]_<namespace>_<name>.yaml`` (cluster-scoped: no namespace part), from the object alone.

    ``_`` never occurs in a Kubernetes name, so the parts cannot run into each other. A namespace or name that had
    to be changed to fit ``[a-z0-9.-]`` (or shortened) gets 8 hex digits of its identity's hash, so names stay unique.
    """
    group, _, kind, namespace, name = identity(obj, 0)
    kind_part = _UNSAFE.sub("-", f"{kind}.{group}".lower() if group else kind.lower()).strip("-.")
    safe = [_UNSAFE.sub("-", s.lower()).strip("-.") for s in (namespace, name)]
    altered = any(s != orig for s, orig in zip(safe, (namespace, name)))
    stem = "_".join(p for p in (kind_part, *safe) if p) or "object"
    if altered or len(stem) > _MAX_STEM:
        digest = hashlib.sha256(f"{group}/{kind}/{namespace}/{name}".encode()).hexdigest()[:8]
        stem = f"{stem[:_MAX_STEM]}-{digest}"
    return stem + ".yaml"


def planned_files(objs: Iterable[dict]) -> dict[str, str]:
    """File name → text for every object, in apply order, then the kustomization; nothing touches the disk."""
    files: dict[str, str] = {}
    owners: dict[str, str] = {}
    for i, obj in enumerate(objs):
        name = object_file_name(obj)
        ref = "/".join(p for p in identity(obj, i) if p)
        if name in files:
            raise UsageError(
                f"--output-dir: {owners[name]} and {ref} would both be written to {name} (the same object twice?)"
            )
        files[name] = _FILE_HEADER + dump_yaml([obj])
        owners[name] = ref
    files[KUSTOMIZATION] = _KUSTOMIZATION_HEADER + yaml_document(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": list(files),
            # kustomize would otherwise re-sort by its own kind table; keep our apply order.
            "sortOptions": {"order": "fifo"},
        }
    )
    return files


@dataclass
class Changes:
    """How a directory differs from a render: file names added, changed and removed (each sorted)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def lines(self) -> list[str]:
        return [
            f"{what}: {name}"
            for what, names in (("added", self.added), ("changed", self.changed), ("removed", self.removed))
            for name in names
        ]

    def summary(self) -> str:
        return f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed"


def output_dir_changes(objs: Iterable[dict], directory: str | os.PathLike[str]) -> Changes:
    """What writing ``objs`` to ``directory`` would change (``--check``); raises UsageError as writing would."""
    files = planned_files(objs)
    return _changes(files, _existing(Path(os.path.realpath(directory)), os.fspath(directory), files))


def write_output_dir(objs: Iterable[dict], directory: str | os.PathLike[str]) -> list[Path]:
    """Write one file per object and the kustomization; remove files of an earlier render no longer rendered.

    Returns the paths of the object files in apply order, then the kustomization's. Raises
    :class:`~kserve_compile.errors.UsageError` naming the directory when it cannot or must not be written; a failure
    before the first rename leaves the directory as it was.
    """
    files = planned_files(objs)
    shown = os.fspath(directory)
    target = Path(os.path.realpath(shown))  # a symlink to a directory: write where it points
    existing = _existing(target, shown, files)
    changes = _changes(files, existing)
    try:
        target.mkdir(parents=True, exist_ok=True)
        staged = _stage(target, {n: files[n] for n in (*changes.added, *changes.changed)})
        for name in sorted(staged, key=lambda n: n == KUSTOMIZATION):  # the kustomization last
            os.replace(staged[name], target / name)
        leftovers = [n for n in existing.present if n.startswith(".") and _TMP_INFIX in n]  # of an interrupted run
        for name in [*changes.removed, *leftovers]:
            (target / name).unlink(missing_ok=True)
    except OSError as exc:
        raise UsageError(f"--output-dir {shown}: cannot write: {exc.strerror or exc}") from None
    out = Path(shown)
    return [out / name for name in files if name != KUSTOMIZATION] + [out / KUSTOMIZATION]


def _stage(target: Path, texts: Mapping[str, str]) -> dict[str, Path]:
    """Write each text under a hidden temporary name in ``target``; on failure remove them all and re-raise."""
    staged: dict[str, Path] = {}
    token = secrets.token_hex(4)
    try:
        for name, text in texts.items():
            path = target / f".{name}{_TMP_INFIX}{token}"
            path.write_text(text, encoding="utf-8")
            staged[name] = path
    except BaseException:
        for path in staged.values():
            path.unlink(missing_ok=True)
        raise
    return staged


@dataclass
class _Existing:
    ours: dict[str, str]  # file of the last render → its text (None-free: unreadable ones are left out)
    present: set[str]  # every entry in the directory


def _existing(target: Path, shown: str, planned: Mapping[str, str]) -> _Existing:
    """The directory as it is: which files an earlier render wrote; refuses to overwrite anything else."""
    if not os.path.lexists(target):
        return _Existing({}, set())
    if not target.is_dir():
        raise UsageError(f"--output-dir {shown}: exists and is not a directory")
    try:
        present = set(os.listdir(target))
    except OSError as exc:
        raise UsageError(f"--output-dir {shown}: cannot read: {exc.strerror}") from None
    listed = _listed(target, shown) if KUSTOMIZATION in present else []
    ours = {}
    for name in listed:
        text = _read(target / name)
        if text is not None and text.startswith(OUTPUT_DIR_MARKER):
            ours[name] = text
    if KUSTOMIZATION in present:
        ours[KUSTOMIZATION] = _read(target / KUSTOMIZATION) or ""
    foreign = sorted(n for n in planned if n in present and n not in ours)
    if foreign:
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise UsageError(
            f"refusing to overwrite {foreign[0]!r}{more} in --output-dir {shown}: kserve-compile did not write it; "
            "move it away or choose another directory"
        )
    return _Existing(ours, present)


def _listed(target: Path, shown: str) -> list[str]:
    """The files the last render's kustomization lists; refuses a kustomization kserve-compile did not write."""
    text = _read(target / KUSTOMIZATION) or ""
    if not text.startswith(OUTPUT_DIR_MARKER):
        raise UsageError(
            f"refusing to overwrite --output-dir {shown}: its {KUSTOMIZATION} was not written by kserve-compile "
            f"(it does not start with {OUTPUT_DIR_MARKER!r}); choose a new or empty directory"
        )
    try:
        listed = (yaml.safe_load(text) or {}).get("resources") or []
    except (yaml.YAMLError, AttributeError):
        listed = None
    if not isinstance(listed, list) or not all(isinstance(n, str) and "/" not in n for n in listed):
        raise UsageError(
            f"refusing to overwrite --output-dir {shown}: its {KUSTOMIZATION} cannot be read; choose a new or empty directory"
        )
    return [n for n in listed if n != KUSTOMIZATION]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _changes(planned: Mapping[str, str], existing: _Existing) -> Changes:
    out = Changes()
    for name, text in planned.items():
        if name not in existing.present:
            out.added.append(name)
        elif existing.ours.get(name) != text:
            out.changed.append(name)
    out.removed = [n for n in existing.ours if n not in planned and n in existing.present]
    out.added.sort()
    out.changed.sort()
    out.removed.sort()
    return out
