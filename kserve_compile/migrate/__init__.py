"""``migrate``: rewrite inputs to the form KServe stores, so what a GitOps tool applies is what it reads back.

KServe's InferenceService mutating webhook (``pkg/apis/serving/v1beta1/inference_service_defaults.go``) rewrites
legacy inputs before they are stored — deploymentMode names, the framework predictor schema, and more (``rules``).
Argo CD and Flux then compare the stored object with the file and report a drift that never settles (kserve#2232).
This package computes, per file, the text with those rewrites made (``roundtrip``: comments and layout kept, other
documents untouched) and, per object, the before/after data and its RFC 6902 patch. It reads files; it never writes.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import jsonpatch

from .. import constants as C
from ..errors import CompileError, InputError, Problem
from ..inputs.config import KServeConfig, load_config
from ..inputs.gather import config_documents
from ..inputs.parse import Document, expand_paths, parse_text, read_source
from .edit import Change, Editor
from .roundtrip import Chunk, dump, load, split_documents, verify
from .rules import ISVC_RULES, Settings, apply_rules

__all__ = [
    "output",
    "ISVC_RULES",
    "FileMigration",
    "Migration",
    "ObjectMigration",
    "migrate_paths",
    "migrate_text",
    "settings_for",
]


@dataclass
class ObjectMigration:
    """One object the rules change: where it is, its data before and after, and each change."""

    file: str
    index: int  # 0-based position of the object among the file's documents
    kind: str
    namespace: str
    name: str
    before: dict[str, Any]
    after: dict[str, Any]
    changes: list[Change]

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace + '/' if self.namespace else ''}{self.name}"

    def json_patch(self) -> list[dict[str, Any]]:
        """RFC 6902 operations that turn ``before`` into ``after``."""
        return list(jsonpatch.make_patch(self.before, self.after).patch)


@dataclass
class FileMigration:
    file: str
    old_text: str
    new_text: str
    objects: list[ObjectMigration] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.new_text != self.old_text


@dataclass
class Migration:
    files: list[FileMigration]
    warnings: list[Problem]

    @property
    def changed(self) -> list[FileMigration]:
        return [f for f in self.files if f.changed]


def settings_for(config: KServeConfig) -> Settings:
    return Settings.from_config(config)


def migrate_paths(paths: Sequence[str], config_file: str | None = None) -> Migration:
    """Every input file migrated in memory; problems of all files are raised together (``CompileError``)."""
    files = expand_paths(paths)
    texts: dict[str, str] = {}
    problems: list[Problem] = []
    for path in files:
        name = "<stdin>" if path == "-" else path
        try:
            texts[name] = read_source(path)
            parse_text(texts[name], name)  # the project's own syntax errors, located in the whole file
        except CompileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise CompileError(problems)
    settings = settings_for(_config(texts, config_file))
    results, warnings = [], []
    for name, text in texts.items():
        try:
            result = migrate_text(text, name, settings)
        except CompileError as exc:
            problems.extend(exc.problems)
            continue
        results.append(result)
        warnings.extend(_local_model_notes(text, name))
    if problems:
        raise CompileError(problems)
    return Migration(results, warnings)


def _config(texts: dict[str, str], config_file: str | None) -> KServeConfig:
    """The ``--config`` file's ConfigMap, else one among the inputs (as ``render`` takes it), else KServe's shipped one."""
    if config_file is not None:
        maps = config_documents(config_file)
    else:
        maps = [d for name, text in texts.items() for d in parse_text(text, name)]
    return load_config(
        [d for d in maps if d.api_version == "v1" and d.kind == "ConfigMap" and d.name == C.CONFIGMAP_NAME]
    )


def migrate_text(text: str, file: str, settings: Settings) -> FileMigration:
    """One file's text with every InferenceService in it migrated; untouched documents keep their bytes."""
    if file.endswith(".json"):
        return _migrate_json(text, file, settings)
    out: list[str] = []
    objects: list[ObjectMigration] = []
    problems: list[Problem] = []
    index = 0  # objects before this chunk's, as a reader counts them (comment-only text is no document)
    for chunk in split_documents(text):
        try:
            body, migrated, count = _migrate_chunk(chunk, index, file, settings)
        except CompileError as exc:
            problems.extend(exc.problems)
            body, migrated, count = chunk.body, None, 1
        index += count
        out.append(chunk.marker + body)
        if migrated is not None:
            objects.append(migrated)
    if problems:
        raise CompileError(problems)
    return FileMigration(file, text, "".join(out), objects)


def _is_isvc(doc: Document) -> bool:
    return doc.api_version == C.ISVC_API_VERSION and doc.kind == C.KIND_ISVC


def _migrate_chunk(chunk: Chunk, index: int, file: str, settings: Settings) -> tuple[str, ObjectMigration | None, int]:
    """The chunk's new text, its migrated object (None when nothing changes), and how many objects it holds."""
    docs = [_shift(d, chunk.line) for d in parse_text(chunk.body, file)]
    if not any(_is_isvc(d) for d in docs):
        return chunk.body, None, len(docs)
    if len(docs) != 1:
        raise CompileError(
            [docs[0].problem("more than one document between two `---` lines; put each InferenceService in its own")]
        )
    migrated = _migrate_object(docs[0], index, file, settings)
    if migrated is None:
        return chunk.body, None, 1
    tree, yaml = load(chunk, file)
    apply_rules(tree, settings, Editor(roundtrip=True))
    body = dump(tree, yaml, chunk)
    verify(body, migrated.after, file, docs[0].locate(()))
    return body, migrated, 1


def _migrate_object(doc: Document, index: int, file: str, settings: Settings) -> ObjectMigration | None:
    """The rules over the plain data of one InferenceService (the truth the text must match); None when none applies."""
    editor = Editor(roundtrip=False)
    after = copy.deepcopy(doc.data)
    try:
        apply_rules(after, settings, editor)
    except InputError as exc:
        raise CompileError([doc.problem(exc.message, exc.path)]) from None
    if not editor.changes:
        return None
    return ObjectMigration(file, index, doc.kind, doc.namespace, doc.name, doc.data, after, editor.changes)


_JSON_INDENT = re.compile(r"^\n?([ \t]+)\S", re.MULTILINE)


def _migrate_json(text: str, file: str, settings: Settings) -> FileMigration:
    """A ``.json`` file has no comments to keep: the migrated object is written back with the file's indentation."""
    docs = parse_text(text, file)
    migrated = _migrate_object(docs[0], 0, file, settings) if len(docs) == 1 and _is_isvc(docs[0]) else None
    if migrated is None:
        return FileMigration(file, text, text, [])
    match = _JSON_INDENT.search(text)
    indent = match.group(1) if match else None
    new = json.dumps(migrated.after, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")
    return FileMigration(file, text, new, [migrated])


def _shift(doc: Document, lines: int) -> Document:
    """A chunk's document with positions counted from the top of the whole file."""
    doc.positions = {path: (line + lines, col) for path, (line, col) in doc.positions.items()}
    return doc


_LOCAL_MODEL_LABELS = (C.LABEL_LOCAL_MODEL, C.LABEL_LOCAL_MODEL_NAMESPACE)
_LOCAL_MODEL_ANNOTATIONS = (C.ANN_LOCAL_MODEL_SOURCE_URI, C.ANN_LOCAL_MODEL_PVC_NAME)


def _local_model_notes(text: str, file: str) -> list[Problem]:
    """KServe recomputes the local-model labels from LocalModelCache objects, which kserve-compile cannot see."""
    notes = []
    for doc in parse_text(text, file):
        if not _is_isvc(doc):
            continue
        meta = doc.data.get("metadata") or {}
        for section, keys in (("labels", _LOCAL_MODEL_LABELS), ("annotations", _LOCAL_MODEL_ANNOTATIONS)):
            present = found if isinstance(found := meta.get(section), dict) else {}
            for key in keys:
                if key in present:
                    notes.append(
                        replace(
                            doc.problem(
                                "left as is: KServe's webhook sets or removes it from the cluster's LocalModelCache objects "
                                "(setLocalModelLabel), which kserve-compile does not read",
                                f"metadata.{section}[{key}]",
                            ),
                            severity="warning",
                        )
                    )
    return notes
