"""The subset of Go's ``text/template`` and ``html/template`` KServe's templates use.

KServe evaluates three kinds of Go templates: ServingRuntime placeholders (``{{.Name}}``,
``{{.Labels.modelClass}}``; ``html/template`` over the JSON of the container), the ingress ``domainTemplate`` and
``pathTemplate`` (``text/template``). Supported here: field chains (``.Name``, ``.Labels.key``), ``index .Map "key"``,
string literals, and the ``{{-``/``-}}`` trim markers. Anything else is rejected with a message naming the action.

Semantics kept from Go: a missing *struct* field is an error; a missing *map* key prints ``<no value>`` in text mode
and nothing in html mode; html mode escapes values as Go's ``htmlEscaper`` does (``+`` too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

NO_VALUE = "<no value>"

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_FIELD_CHAIN = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*)+$|^\.$")
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_HTML_ESCAPES = str.maketrans(
    {"\0": "\ufffd", '"': "&#34;", "&": "&amp;", "'": "&#39;", "+": "&#43;", "<": "&lt;", ">": "&gt;"}
)


class Struct(dict):
    """A Go struct as template data: looking up a field it lacks is an error, unlike a map."""


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Action:
    source: str
    words: tuple[str, ...]
    fields: tuple[str, ...] | None = None  # a plain field chain (".Name", ".Labels.x"): its names, split once


class GoTemplate:
    """A parsed template; ``ValueError`` for syntax this subset (or Go) rejects."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._parts = _parse(source)

    def render(self, data: Mapping[str, Any], *, html: bool = False) -> str:
        out: list[str] = []
        for part in self._parts:
            if type(part) is _Text:
                out.append(part.text)
                continue
            value = _walk(part.fields, data, part) if part.fields is not None else _evaluate(part, data)
            if value is _MISSING:
                out.append("" if html else NO_VALUE)
                continue
            text = value if type(value) is str else _print(value)
            out.append(text.translate(_HTML_ESCAPES) if html else text)
        return "".join(out)


_MISSING = object()


@lru_cache(maxsize=1024)  # the same few templates (domain, path, runtime placeholders) are parsed per isvc
def _parse(source: str) -> tuple[_Text | _Action, ...]:
    parts: list[_Text | _Action] = []
    pos = 0
    for match in _ACTION.finditer(source):
        text = source[pos : match.start()]
        if match.group(1):
            text = text.rstrip()
        if text:
            parts.append(_Text(text))
        body = match.group(2).strip()
        if not body:
            raise ValueError(f"missing value for command in {match.group(0)!r}")
        if body.startswith("/*"):
            pos = match.end()
            continue
        words = _split_words(body, match.group(0))
        chain = words[0] if len(words) == 1 and words[0].startswith(".") and words[0] != "." else None
        parts.append(_Action(match.group(0), words, tuple(chain.split(".")[1:]) if chain else None))
        pos = match.end()
        if match.group(3):
            rest = source[pos:]
            pos += len(rest) - len(rest.lstrip())
    tail = source[pos:]
    if "{{" in tail:
        raise ValueError(f"unclosed action in {tail!r}")
    if tail:
        parts.append(_Text(tail))
    return tuple(parts)


@lru_cache(maxsize=1024)  # runtime placeholders parse the whole container JSON per isvc; its actions repeat
def _split_words(body: str, action: str) -> tuple[str, ...]:
    words = tuple(re.findall(r'"(?:[^"\\]|\\.)*"|\S+', body))
    head = words[0]
    if head == "index":
        if len(words) < 3 or not _FIELD_CHAIN.match(words[1]):
            raise ValueError(f"unsupported template action {action!r}: index needs a field and a key")
        for key in words[2:]:
            if not _STRING.match(key):
                raise ValueError(f"unsupported template action {action!r}: index keys must be string literals")
        return words
    if len(words) == 1 and (_FIELD_CHAIN.match(head) or _STRING.match(head)):
        return words
    raise ValueError(f"unsupported template action {action!r}")


def _evaluate(action: _Action, data: Mapping[str, Any]) -> Any:
    words = action.words
    if words[0] == "index":
        value = _field_chain(words[1], data, action)
        for key in words[2:]:
            if value is _MISSING or value is None:
                return _MISSING
            if not isinstance(value, Mapping):
                raise ValueError(f"error calling index in {action.source!r}: can't index item of type {type(value).__name__}")
            value = value.get(_unquote(key), _MISSING)
        return value
    if _STRING.match(words[0]):
        return _unquote(words[0])
    return _field_chain(words[0], data, action)


def _field_chain(chain: str, data: Mapping[str, Any], action: _Action) -> Any:
    if chain == ".":
        return data
    return _walk(chain.split(".")[1:], data, action)


def _walk(names: Sequence[str], data: Mapping[str, Any], action: _Action) -> Any:
    value: Any = data
    for name in names:
        if value is _MISSING or value is None:
            return _MISSING
        if isinstance(value, Struct):
            if name not in value:
                raise ValueError(f"template: {action.source}: can't evaluate field {name}")
            value = value[name]
        elif isinstance(value, Mapping):
            value = value.get(name, _MISSING)
        else:
            raise ValueError(f"template: {action.source}: can't evaluate field {name} in type {type(value).__name__}")
    return value


def _unquote(literal: str) -> str:
    return bytes(literal[1:-1], "utf-8").decode("unicode_escape")


def _print(value: Any) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{_print(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(_print(v) for v in value) + "]"
    return str(value)


def object_meta_data(name: str, namespace: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> Struct:
    """The ObjectMeta fields KServe's placeholders may name (nil maps behave as empty)."""
    return Struct(
        Name=name,
        Namespace=namespace,
        Labels=dict(labels),
        Annotations=dict(annotations),
        GenerateName="",
        UID="",
        ResourceVersion="",
        Generation=0,
    )
