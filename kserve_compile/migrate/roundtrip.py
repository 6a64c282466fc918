"""Apply the rules to a YAML file's text so that only the changed documents, and in them only the changed fields, move.

A file is cut into its documents at the ``---`` lines; a document no rule changes keeps its text byte for byte.
A changed one is loaded with ruamel.yaml's round-trip loader (comments, key order, quoting and flow style kept),
edited by the same rules, and dumped with the indentation guessed from its own text. The result is then read back
with the project's parser (``parse.parse_text``, as ``render`` reads it) and must equal the plain-data migration
exactly; if ruamel's round trip altered anything else, the document is refused rather than silently rewritten.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from ..errors import CompileError, Problem
from ..inputs.parse import parse_text

_DOC_START = re.compile(r"^---(?:[ \t]+#.*|[ \t]*)$")
_WIDTH = 1 << 16  # never fold a long line the user wrote on one


@dataclass
class Chunk:
    """One document's text: its ``---`` line (or "") and the rest; ``line`` is the 0-based line of ``body``."""

    marker: str
    body: str
    line: int


def split_documents(text: str) -> list[Chunk]:
    """The file's documents, cut before each ``---`` line; ``"".join(marker + body)`` gives ``text`` back."""
    chunks = [Chunk("", "", 0)]
    for number, line in enumerate(text.splitlines(keepends=True)):
        if _DOC_START.match(line.rstrip("\r\n")):
            chunks.append(Chunk(line, "", number + 1))
        else:
            chunks[-1].body += line
    return _directives_to_marker(chunks if chunks[0].body or len(chunks) == 1 else chunks[1:])


def _directives_to_marker(chunks: list[Chunk]) -> list[Chunk]:
    """``%YAML``/``%TAG`` lines belong to the document after them: they join its ``---`` line, never parsed alone."""
    out: list[Chunk] = []
    for chunk in chunks:
        if out and out[-1].body and _only_directives(out[-1].body) and chunk.marker:
            prev = out.pop()
            chunk = Chunk(prev.marker + prev.body + chunk.marker, chunk.body, chunk.line)
        out.append(chunk)
    return out


def _only_directives(body: str) -> bool:
    lines = [line.strip() for line in body.splitlines()]
    return any(line.startswith("%") for line in lines) and all(
        not line or line.startswith(("%", "#")) for line in lines
    )


_KEY_LINE = re.compile(r"^( *)(?:- +)?[^\s#-][^#]*?:(?:\s|$)")
_ITEM_LINE = re.compile(r"^( *)- ")


def guess_indent(text: str) -> tuple[int, int]:
    """The document's own mapping indent and block-sequence dash offset (``key:`` then ``  - x`` is offset 2):
    the first nested key and the first sequence under a key decide, as a person reading the file would."""
    mapping = offset = None
    previous: tuple[int, str] | None = None  # indent and text of the last `key:` line that opens a block
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM_LINE.match(line)
        key = _KEY_LINE.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if previous is not None:
            if item and offset is None and indent >= previous[0]:
                offset = indent - previous[0]
            elif key and not item and mapping is None and indent > previous[0]:
                mapping = indent - previous[0]
        previous = (
            (indent + (len(item.group(0)) - len(item.group(1)) if item else 0), line)
            if key and line.rstrip().endswith(":")
            else None
        )
        if mapping is not None and offset is not None:
            break
    return mapping or 2, offset if offset is not None else 0


def _yaml(indent: int, sequence_offset: int) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = _WIDTH
    yaml.indent(mapping=indent, sequence=sequence_offset + 2, offset=sequence_offset)
    return yaml


def load(chunk: Chunk, file: str) -> tuple[Any, YAML]:
    """The round-trip tree of one document and a dumper that writes it back in the same indentation."""
    try:
        yaml = _yaml(*guess_indent(chunk.body))
        tree = yaml.load(_content(chunk.body))
        _keep_anchors(tree)
        return tree, yaml
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (chunk.line + mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise CompileError([Problem(f"invalid YAML: {exc.problem or exc}", file=file, line=line, col=col)]) from None


def _keep_anchors(node: Any) -> None:
    """ruamel drops an anchor nothing refers to when it dumps; the user wrote it, so it stays."""
    anchor = getattr(node, "anchor", None)
    if anchor is not None and getattr(anchor, "value", None):
        anchor.always_dump = True
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        _keep_anchors(child)


_DOC_END = re.compile(r"^\.\.\.[ \t]*(?:#.*)?\r?$", re.MULTILINE)


def _content(body: str) -> str:
    """The document without its ``...`` end line and what follows it (kept as text by :func:`dump`)."""
    end = _DOC_END.search(body)
    return body[: end.start()] if end else body


def dump(tree: Any, yaml: YAML, chunk: Chunk) -> str:
    out = io.StringIO()
    yaml.explicit_start = chunk.body.lstrip().startswith("---")
    yaml.dump(tree, out)
    text = out.getvalue()
    content = _content(chunk.body)
    if not content.endswith("\n"):
        text = text.rstrip("\n")
    text += chunk.body[len(content) :]
    if "\r\n" in chunk.body:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text


def verify(new_body: str, expected: dict[str, Any], file: str, where: tuple[int, int]) -> None:
    """The rewritten document, read as ``render`` reads it, must be exactly the migrated data."""
    docs = parse_text(new_body, file)
    if len(docs) != 1 or docs[0].data != expected:
        raise CompileError(
            [
                Problem(
                    "cannot rewrite this document without changing fields no rule touches (a ruamel.yaml round-trip limit); "
                    "apply the changes `migrate --dry-run -o json-patch` lists by hand",
                    kind=str(expected.get("kind", "")),
                    name=_name(expected),
                    file=file,
                    line=where[0],
                    col=where[1],
                )
            ]
        )


def _name(data: dict[str, Any]) -> str:
    meta = data.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, dict) else ""
