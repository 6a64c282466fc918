"""Stage 1, parse: files, directories and stdin into located documents.

YAML is read with libyaml's composer (PyYAML's C loader) and turned into plain data here, so that every mapping key
and sequence item keeps its line and column for error messages, duplicate keys are caught, and nothing but the
standard YAML scalars is ever constructed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from ..constants import OUTPUT_DIR_MARKER
from ..errors import CompileError, Problem, UsageError
from ..gcpause import gc_paused
from ..kube.fields import split_path

YAML_SUFFIXES = (".yaml", ".yml", ".json")
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 200
MAX_NODES = 1_000_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Path_ = tuple[str | int, ...]


@dataclass
class Document:
    """One YAML document: its data, where it came from, and the position of every node in it."""

    data: Any
    file: str
    index: int = 0
    positions: dict[Path_, tuple[int, int]] = field(default_factory=dict, repr=False)

    # kind and apiVersion are read for every document at every stage: the lookups inlined
    @property
    def kind(self) -> str:
        data = self.data
        value = data.get("kind") if isinstance(data, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def api_version(self) -> str:
        data = self.data
        value = data.get("apiVersion") if isinstance(data, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        return _string_at(self.data.get("metadata") if isinstance(self.data, dict) else None, "name")

    @property
    def namespace(self) -> str:
        return _string_at(self.data.get("metadata") if isinstance(self.data, dict) else None, "namespace")

    def locate(self, path: str | Sequence[str | int]) -> tuple[int, int]:
        """Line and column of the deepest node on ``path`` ("spec.predictor.containers[0].env") that exists."""
        parts = split_path(path) if isinstance(path, str) else tuple(path)
        while parts:
            if parts in self.positions:
                return self.positions[parts]
            parts = parts[:-1]
        return self.positions.get((), (0, 0))

    def problem(self, message: str, path: str = "", severity: str = "error", about: str = "") -> Problem:
        line, col = self.locate(path)
        return Problem(message, path, self.kind, self.name, self.file, line, col, severity, about)


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given, directories walked recursively in sorted order (YAML/JSON files only), ``-`` for stdin.

    A directory met on the walk that an earlier ``render --output-dir`` wrote (its ``kustomization.yaml`` starts
    with the marker) is output, not input, and is left out: ``render . --output-dir out/`` works on every run. A
    rendered directory given by name is read (``diff`` compares rendered directories)."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            files = [f for f in path.rglob("*") if f.is_file() and f.suffix in YAML_SUFFIXES]
            rendered = {f.parent for f in files if f.name == "kustomization.yaml" and f.parent != path and _marked(f)}
            found = sorted(
                str(f)
                for f in files
                if not any(part.startswith(".") for part in f.relative_to(path).parts)
                and not any(d in rendered for d in f.parents)
            )
            out.extend(found)
        elif path.is_file():
            out.append(str(path))
        elif path.exists():
            raise UsageError(f"{p}: not a regular file or directory")
        else:
            raise UsageError(f"{p}: no such file or directory")
    return out


def read_source(path: str) -> str:
    if path == "-":
        raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        size = os.path.getsize(path)
        if size > MAX_INPUT_BYTES:
            raise CompileError([Problem(f"file is {size} bytes; the limit is {MAX_INPUT_BYTES}", file=path)])
        with open(path, "rb") as fh:
            raw = fh.read()
    name = "<stdin>" if path == "-" else path
    if len(raw) > MAX_INPUT_BYTES:
        raise CompileError([Problem(f"input is larger than {MAX_INPUT_BYTES} bytes", file=name)])
    if b"\0" in raw:
        raise CompileError([Problem("input is binary (contains NUL bytes), not YAML", file=name)])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CompileError([Problem(f"input is not UTF-8 text (byte {exc.start})", file=name)]) from None


def parse_paths(paths: Iterable[str]) -> list[Document]:
    """Every document of every input; all problems of all files are raised together."""
    paths = list(paths)
    documents: list[Document] = []
    problems: list[Problem] = []
    expanded = expand_paths(paths)
    for path in expanded:
        name = "<stdin>" if path == "-" else path
        try:
            documents.extend(parse_text(read_source(path), name))
        except CompileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise CompileError(problems)
    if not documents:
        where = ", ".join("<stdin>" if p == "-" else p for p in (expanded or paths))
        why = "empty, or only comments" if expanded else "a directory without .yaml, .yml or .json files"
        raise CompileError([Problem(f"no Kubernetes objects in the input ({why})", file=where)])
    return documents


@gc_paused
def parse_text(text: str, file: str) -> list[Document]:
    """All non-empty documents in ``text``; ``CompileError`` with line and column on malformed YAML."""
    loader = _Loader(text)
    docs: list[Document] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            builder = _Builder(loader, file)
            data = builder.build(node, (), 0)
            if data is None:
                index += 1
                continue
            doc = Document(data, file, index, builder.positions)
            if not isinstance(data, dict):
                line, col = builder.positions.get((), (0, 0))
                raise CompileError(
                    [
                        Problem(
                            f"document {index + 1} is a {type(data).__name__}, not a Kubernetes object (a mapping)",
                            file=file,
                            line=line,
                            col=col,
                        )
                    ]
                )
            docs.append(doc)
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or str(exc)
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
            message += " (a tab: YAML does not allow tabs for indentation)"
        raise CompileError([Problem(f"invalid YAML: {message}", file=file, line=line, col=col)]) from None
    except yaml.YAMLError as exc:
        raise CompileError([Problem(f"invalid YAML: {exc}", file=file)]) from None
    finally:
        loader.dispose()
    return docs


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    return lines[line][column] if line < len(lines) and column < len(lines[line]) else ""


class _Builder:
    """Turns composed YAML nodes into dicts/lists/scalars, recording positions and rejecting duplicate keys.

    Written for speed (it visits every node of every input): one method per node kind, scalars dispatched on their
    tag. A key's position is the position of its path; an item's, of its index.
    """

    def __init__(self, loader: Any, file: str) -> None:
        self.loader = loader
        self.file = file
        self.positions: dict[Path_, tuple[int, int]] = {}
        self.nodes = 0
        self.scalars = {tag: getattr(loader, method) for tag, method in _SCALAR_CONSTRUCTORS.items()}

    def build(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH:
            self._fail(node, f"nesting deeper than {MAX_DEPTH} levels")
        if self.nodes > MAX_NODES:
            self._fail(node, f"more than {MAX_NODES} YAML nodes (alias expansion?)")
        mark = node.start_mark
        self.positions[path] = (mark.line + 1, mark.column + 1)
        kind = type(node)
        if kind is yaml.MappingNode:
            return self._mapping(node, path, depth)
        if kind is yaml.SequenceNode:
            return [self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        positions = self.positions
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self._fail(key_node, "YAML merge keys (<<) are not supported in Kubernetes manifests")
            key = self._key(key_node, path, depth + 1)
            if key in out:
                self._fail(key_node, f'duplicate key "{key}"')
            key_path = path + (key,)
            out[key] = self.build(value_node, key_path, depth + 1)
            mark = key_node.start_mark
            positions[key_path] = (mark.line + 1, mark.column + 1)
        return out

    def _key(self, key_node: yaml.Node, path: Path_, depth: int) -> str:
        if type(key_node) is not yaml.ScalarNode:  # built first, so that its own problems are reported as before
            self.build(key_node, path + ("<key>",), depth)
            self._fail(key_node, "mapping keys must be scalars")
        self.nodes += 1
        if depth > MAX_DEPTH:
            self._fail(key_node, f"nesting deeper than {MAX_DEPTH} levels")
        if self.nodes > MAX_NODES:
            self._fail(key_node, f"more than {MAX_NODES} YAML nodes (alias expansion?)")
        key = self._scalar(key_node)
        return key if type(key) is str else _key_text(key)

    def _scalar(self, node: yaml.Node) -> Any:
        tag = node.tag
        if tag == "tag:yaml.org,2002:str":
            return node.value
        construct = self.scalars.get(tag)
        if construct is not None:
            return construct(node)
        if tag == "tag:yaml.org,2002:timestamp":
            return node.value  # Kubernetes timestamps are strings
        self._fail(node, f"unsupported YAML tag {tag}")

    def _fail(self, node: yaml.Node, message: str) -> NoReturn:
        mark = node.start_mark
        raise CompileError([Problem(message, file=self.file, line=mark.line + 1, col=mark.column + 1)])


# The standard YAML scalars and the SafeConstructor method that builds each (str is taken as written).
_SCALAR_CONSTRUCTORS = {
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
    "tag:yaml.org,2002:null": "construct_yaml_null",
}


def _key_text(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _string_at(data: Any, key: str) -> str:
    """``data[key]`` when it is a string, else ``""`` (a wrong type is the envelope check's to report)."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _marked(path: Path) -> bool:
    """Whether the file starts with what ``render --output-dir`` writes first."""
    with open(path, "rb") as fh:
        return fh.read(len(OUTPUT_DIR_MARKER)) == OUTPUT_DIR_MARKER.encode()
