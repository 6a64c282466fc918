""":class:`GoTemplate`: the restricted kind — ServingRuntime placeholders and the ingress domain and path templates.

KServe executes ServingRuntime placeholders (``{{.Name}}``, ``{{.Labels.modelClass}}``) with ``html/template``
over the JSON of the container (``ReplacePlaceholders``, pkg/controller/v1beta1/inferenceservice/utils/utils.go),
and the ingress ``domainTemplate``/``pathTemplate`` with ``text/template`` (reconcilers/ingress/domain.go,
path.go). The template is parsed by the shared parser (:mod:`.parse`); this kind then accepts only actions of one
command: a field chain (``.Name``, ``.Labels.key``), ``.``, a string constant, or ``index`` of a field chain (or
``.``) by string constants — anything else is ``unsupported template action …``. Each accepted action is compiled
once (field chains pre-split) and parses are cached: the placeholders render per isvc on the hot path.

Semantics kept from Go: a missing *struct* field is an error; a missing *map* key prints ``<no value>`` in text
mode and nothing in html mode; html mode escapes values as Go's ``htmlEscaper`` does (``+`` too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, final

from .errors import ExecFault, TemplateError, exec_error, parse_error
from .nodes import Action, Command, Dot, Field, Identifier, If, Node, String, node_text
from .parse import parse
from .quote import go_quote
from .values import MISSING, NO_VALUE, Struct, go_index, print_value, walk_fields

_HTML_ESCAPES = str.maketrans(
    {"\0": "\ufffd", '"': "&#34;", "&": "&amp;", "'": "&#39;", "+": "&#43;", "<": "&lt;", ">": "&gt;"}
)
_SUBSET = "this template kind supports only a field chain, a string constant and index of a field by string keys"


@final  # lets a type checker read ``type(part) is _Chain`` as narrowing
class _Chain(NamedTuple):
    """``.A.B``: the hot path, its names split once."""

    fields: tuple[str, ...]
    node: Field


class _Dot(NamedTuple):
    node: Dot

    def evaluate(self, data: Any) -> Any:
        return data


class _Const(NamedTuple):
    value: str

    def evaluate(self, data: Any) -> Any:
        return self.value


class _Index(NamedTuple):
    """``index .M "k" …``."""

    target: Field | Dot
    keys: tuple[str, ...]
    cmd: Command

    def evaluate(self, data: Any) -> Any:
        target = self.target
        if type(target) is Field:
            try:
                data = walk_fields(data, target.idents, False)
            except ExecFault as fault:
                raise ExecFault(fault.message, target) from None
        try:
            return go_index(data, *self.keys)
        except ValueError as exc:
            raise ExecFault(f"error calling index: {exc}", self.cmd) from None


_Part = str | _Chain | _Dot | _Const | _Index


class GoTemplate:
    """A parsed template of the restricted kind; :class:`TemplateError` (a ``ValueError``) for what Go or the
    subset rejects. ``name`` is the template's name, as Go's messages print it."""

    def __init__(self, source: str, name: str = "template") -> None:
        self.source = source
        self.name = name
        self._parts = _COMPILED.get(source) or _compiled(source, name)

    def render(self, data: Mapping[str, Any], *, html: bool = False) -> str:
        out: list[str] = []
        for part in self._parts:
            if type(part) is str:
                out.append(part)
                continue
            try:
                value = walk_fields(data, part.fields, False) if type(part) is _Chain else part.evaluate(data)  # type: ignore[union-attr]
            except ExecFault as fault:
                raise self._error(fault, part) from None
            if value is MISSING:
                out.append("" if html else NO_VALUE)
                continue
            text = value if type(value) is str else print_value(value)
            out.append(text.translate(_HTML_ESCAPES) if html else text)
        return "".join(out)

    def _error(self, fault: ExecFault, part: _Part) -> TemplateError:
        node: Any = fault.node or part.node  # type: ignore[union-attr]
        return exec_error(self.name, self.source, node.pos, node_text(node), fault.message)


# The same few templates (domain, path, runtime placeholders) are built per isvc: compiled once, looked up by source
# alone (the name only words errors, and a template that fails to compile is not kept).
_COMPILED: dict[str, tuple[_Part, ...]] = {}


def _compiled(source: str, name: str) -> tuple[_Part, ...]:
    parts = tuple(_part(node, source, name) for node in parse(source, name))
    if len(_COMPILED) >= 1024:
        _COMPILED.clear()
    _COMPILED[source] = parts
    return parts


def _part(node: Node, source: str, name: str) -> _Part:
    if type(node) is str:
        return node
    if type(node) is If:
        branch = node.branches[0]
        raise parse_error(name, source, node.pos, f"unsupported template action {go_quote(branch.text)}: {_SUBSET}")
    assert type(node) is Action
    reason = _SUBSET
    if len(node.pipe.cmds) == 1:
        cmd = node.pipe.cmds[0]
        first, args = cmd.args[0], cmd.args
        if len(args) == 1 and type(first) is Field:
            return _Chain(first.idents, first)
        if len(args) == 1 and type(first) is Dot:
            return _Dot(first)
        if len(args) == 1 and type(first) is String:
            return _Const(first.text)
        if type(first) is Identifier and first.name == "index":
            target = args[1] if len(args) > 1 else None
            if len(args) < 3 or not isinstance(target, (Field, Dot)):
                reason = "index needs a field and a key"
            elif not all(type(key) is String for key in args[2:]):
                reason = "index keys must be string literals"
            else:
                return _Index(target, tuple(key.text for key in args[2:]), cmd)  # type: ignore[union-attr]
    raise parse_error(name, source, node.pos, f"unsupported template action {go_quote(node.text)}: {reason}")


class ObjectMeta(Struct):
    go_type = "v1.ObjectMeta"


def object_meta_data(name: str, namespace: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> Struct:
    """The ObjectMeta fields KServe's placeholders may name (nil maps behave as empty)."""
    return ObjectMeta(
        Name=name,
        Namespace=namespace,
        Labels=dict(labels),
        Annotations=dict(annotations),
        GenerateName="",
        UID="",
        ResourceVersion="",
        Generation=0,
    )
