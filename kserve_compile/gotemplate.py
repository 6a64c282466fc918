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
from typing import Any, NamedTuple, final

NO_VALUE = "<no value>"

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_FIELD_CHAIN = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*)+$|^\.$")
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_HTML_ESCAPES = str.maketrans(
    {"\0": "\ufffd", '"': "&#34;", "&": "&amp;", "'": "&#39;", "+": "&#43;", "<": "&lt;", ">": "&gt;"}
)


class Struct(dict):
    """A Go struct as template data: looking up a field it lacks is an error, unlike a map."""


@final  # lets a type checker read ``type(part) is not _Text`` as "an _Action" (render checks the type, not isinstance)
class _Text(NamedTuple):
    text: str


class _Action(NamedTuple):
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
                raise ValueError(
                    f"error calling index in {action.source!r}: can't index item of type {type(value).__name__}"
                )
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


# --- the control-flow subset: ``if``/``else``/``end``, function calls, ``and``/``or``/``not`` ---------------------
#
# LLMInferenceServiceConfig presets are executed as one Go ``text/template`` with ``missingkey=error``
# (``ReplaceVariables`` in KServe's llmisvc controller). Supported: ``{{ if P }}…{{ else if P }}…{{ else }}…{{ end }}``,
# pipelines of one command (or ``a | f``), operands (field chains, ``"…"`` and backquoted strings, integers, ``nil``,
# ``true``/``false``, parentheses), the builtins ``and``/``or`` (lazy, as since Go 1.18), ``not``, ``eq``, ``ne``,
# ``len``, ``index`` and caller-supplied functions. Go semantics kept: a nil pointer is false and cannot be walked
# through; a pointer to a scalar (:class:`GoPtr`) is true even when it points at zero, and prints its value.


class GoPtr:
    """A non-nil pointer to a scalar: true in ``if``/``and``/``or`` whatever it points at; prints the value."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoPtr) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"GoPtr({self.value!r})"


class TemplateError(ValueError):
    """Raised when a template cannot be parsed or executed; the message reads like Go's."""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|[()|]|[^\s()|]+')
_INT = re.compile(r"^[+-]?\d+$")


class _Cmd(NamedTuple):
    words: tuple[Any, ...]  # each a token string or a nested _Pipe


class _Pipe(NamedTuple):
    cmds: tuple[_Cmd, ...]


@dataclass
class _If:
    branches: list[tuple[_Pipe | None, list[Any]]]


def _tokens(body: str, action: str) -> list[str]:
    return _TOKEN.findall(body)


def _pipe(tokens: list[str], pos: int, action: str) -> tuple[_Pipe, int]:
    cmds: list[_Cmd] = []
    words: list[Any] = []
    while pos < len(tokens) and tokens[pos] != ")":
        tok = tokens[pos]
        if tok == "|":
            if not words:
                raise TemplateError(f"template: missing command before | in {action!r}")
            cmds.append(_Cmd(tuple(words)))
            words = []
            pos += 1
        elif tok == "(":
            inner, pos = _pipe(tokens, pos + 1, action)
            if pos >= len(tokens):
                raise TemplateError(f"template: unclosed left paren in {action!r}")
            words.append(inner)
            pos += 1
        else:
            words.append(tok)
            pos += 1
    if not words:
        raise TemplateError(f"template: missing value for command in {action!r}")
    cmds.append(_Cmd(tuple(words)))
    return _Pipe(tuple(cmds)), pos


def _parse_pipe(body: str, action: str) -> _Pipe:
    tokens = _tokens(body, action)
    pipe, pos = _pipe(tokens, 0, action)
    if pos != len(tokens):
        raise TemplateError(f"template: unexpected ) in {action!r}")
    return pipe


def _parse_tree(source: str) -> list[Any]:
    root: list[Any] = []
    stack: list[tuple[_If, list[Any]]] = []
    current = root
    pos = 0
    for match in _ACTION.finditer(source):
        text = source[pos : match.start()]
        if match.group(1):
            text = text.rstrip(" \t\r\n")
        if text:
            current.append(text)
        pos = match.end()
        if match.group(3):
            rest = source[pos:]
            pos += len(rest) - len(rest.lstrip(" \t\r\n"))
        body = match.group(2).strip()
        action = match.group(0)
        if body.startswith("/*"):
            continue
        head, _, rest_body = body.partition(" ")
        if head == "if":
            node = _If([(_parse_pipe(rest_body, action), [])])
            current.append(node)
            stack.append((node, current))
            current = node.branches[-1][1]
        elif head == "else":
            if not stack:
                raise TemplateError(f"template: unexpected {{{{else}}}} in {action!r}")
            node = stack[-1][0]
            cond = rest_body.strip()
            if cond.startswith("if "):
                node.branches.append((_parse_pipe(cond[3:], action), []))
            elif cond:
                raise TemplateError(f"template: unsupported else clause in {action!r}")
            else:
                node.branches.append((None, []))
            current = node.branches[-1][1]
        elif head == "end":
            if not stack:
                raise TemplateError(f"template: unexpected {{{{end}}}} in {action!r}")
            current = stack.pop()[1]
        elif head in ("range", "with", "define", "template", "block"):
            raise TemplateError(f"template: unsupported action {head!r} in {action!r}")
        else:
            current.append((_parse_pipe(body, action), action))
    tail = source[pos:]
    if "{{" in tail:
        raise TemplateError(f"template: unclosed action in {tail[:40]!r}")
    if stack:
        raise TemplateError("template: unexpected EOF: an {{if}} has no {{end}}")
    if tail:
        current.append(tail)
    return root


def go_truth(value: Any) -> bool:
    """Go's ``template.IsTrue``."""
    if value is None:
        return False
    if isinstance(value, GoPtr):
        return True
    if isinstance(value, Struct):
        return True
    if isinstance(value, (bool, int, float, str, list, tuple, dict)):
        return bool(value)
    return True


def go_print(value: Any) -> str:
    """How ``text/template`` prints a value (``fmt.Print``; pointers to scalars print what they point at)."""
    if isinstance(value, GoPtr):
        value = value.value
    if value is None:
        return "<nil>"
    return _print(value)


class GoTextTemplate:
    """A parsed ``text/template`` of the control-flow subset above; executes with ``missingkey=error``."""

    def __init__(self, source: str, funcs: Mapping[str, Any] | None = None) -> None:
        self.funcs = dict(funcs or {})
        self._tree = _parse_tree(source)
        self.chains: tuple[str, ...] = tuple(sorted(_chains(self._tree)))

    def digest(self, chain: str, data: Any) -> Any:
        """A hashable digest of what ``chain`` reads from ``data``: data whose digests agree for every chain in
        :attr:`chains` render the same text, since the functions are pure (a value may narrow its own digest with a
        ``template_digest`` method)."""
        return chain_digest(chain, data)

    def render(self, data: Any) -> str:
        out: list[str] = []
        self._walk(self._tree, data, out)
        return "".join(out)

    def _walk(self, nodes: list[Any], data: Any, out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, str):
                out.append(node)
            elif isinstance(node, _If):
                for cond, body in node.branches:
                    if cond is None or go_truth(self._pipe(cond, data, "if")):
                        self._walk(body, data, out)
                        break
            else:
                pipe, action = node
                out.append(go_print(self._pipe(pipe, data, action)))

    def _pipe(self, pipe: _Pipe, data: Any, action: str) -> Any:
        value: Any = _MISSING
        for cmd in pipe.cmds:
            value = self._cmd(cmd, data, action, value)
        return value

    def _cmd(self, cmd: _Cmd, data: Any, action: str, piped: Any) -> Any:
        head, args = cmd.words[0], list(cmd.words[1:])
        extra = [] if piped is _MISSING else [piped]
        if isinstance(head, str) and head in ("and", "or"):
            thunks = [lambda a=a: self._operand(a, data, action) for a in args] + [lambda v=v: v for v in extra]
            if not thunks:
                raise TemplateError(f"template: {action}: wrong number of args for {head}: want at least 1 got 0")
            want = head == "or"
            value = None
            for thunk in thunks:
                value = thunk()
                if go_truth(value) == want:
                    return value
            return value
        if isinstance(head, str) and (head in self.funcs or head in _BUILTINS):
            values = [self._operand(a, data, action) for a in args] + extra
            fn = self.funcs.get(head) or _BUILTINS[head]
            try:
                return fn(*values)
            except TemplateError:
                raise
            except (TypeError, ValueError) as exc:
                raise TemplateError(f"template: {action}: error calling {head}: {exc}") from None
        if isinstance(head, str) and re.match(r"^[A-Za-z_]\w*$", head) and head not in ("nil", "true", "false"):
            raise TemplateError(f'template: {action}: function "{head}" not defined')
        if args or extra:
            raise TemplateError(f"template: {action}: {head} is not a function")
        return self._operand(head, data, action)

    def _operand(self, word: Any, data: Any, action: str) -> Any:
        if isinstance(word, _Pipe):
            return self._pipe(word, data, action)
        if word == "nil":
            return None
        if word in ("true", "false"):
            return word == "true"
        if word.startswith("`"):
            return word[1:-1]
        if word.startswith('"'):
            return _unquote(word)
        if _INT.match(word):
            return int(word)
        if word.startswith("."):
            return _walk_fields(word, data, action)
        if word in self.funcs or word in _BUILTINS:
            return self._cmd(_Cmd((word,)), data, action, _MISSING)
        raise TemplateError(f'template: {action}: function "{word}" not defined')


def _chains(nodes: list[Any]) -> set[str]:
    out: set[str] = set()

    def from_pipe(pipe: _Pipe) -> None:
        for cmd in pipe.cmds:
            for word in cmd.words:
                if isinstance(word, _Pipe):
                    from_pipe(word)
                elif word.startswith("."):
                    out.add(word)

    for node in nodes:
        if isinstance(node, _If):
            for cond, body in node.branches:
                if cond is not None:
                    from_pipe(cond)
                out.update(_chains(body))
        elif isinstance(node, tuple):
            from_pipe(node[0])
    return out


def chain_digest(chain: str, data: Any) -> Any:
    """The digest :meth:`GoTextTemplate.digest` gives, for any template reading ``chain``."""
    return _freeze(_lenient_fields(chain, data))


def _lenient_fields(chain: str, data: Any) -> Any:
    try:
        return _walk_fields(chain, data, "")
    except TemplateError:
        return _MISSING


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _freeze(value: Any) -> Any:
    if type(value) in _SCALARS:  # the common case, without the attribute and ABC look-ups below
        return (type(value).__name__, value)
    narrow = getattr(value, "template_digest", None)
    if narrow is not None:
        return narrow()
    if isinstance(value, Mapping):
        return (type(value).__name__, tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v) for v in value))
    if isinstance(value, GoPtr):
        return ("ptr", _freeze(value.value))
    if value is _MISSING:
        return ("missing",)
    return (type(value).__name__, value)


def _walk_fields(chain: str, data: Any, action: str) -> Any:
    value = data
    if chain == ".":
        return value
    for name in chain.split(".")[1:]:
        if value is None:
            raise TemplateError(f"template: {action}: nil pointer evaluating .{name}")
        if isinstance(value, Struct):
            if name not in value:
                raise TemplateError(f"template: {action}: can't evaluate field {name}")
            value = value[name]
        elif isinstance(value, Mapping):
            if name not in value:
                raise TemplateError(f'template: {action}: map has no entry for key "{name}"')
            value = value[name]
        else:
            raise TemplateError(f"template: {action}: can't evaluate field {name} in type {type(value).__name__}")
    return value


def _scalar(value: Any) -> Any:
    return value.value if isinstance(value, GoPtr) else value


def _index(container: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(container, Mapping):
            container = container.get(key)
        elif isinstance(container, (list, tuple)):
            container = container[int(key)]
        else:
            raise TypeError(f"can't index item of type {type(container).__name__}")
    return container


_BUILTINS: dict[str, Any] = {
    "not": lambda v: not go_truth(v),
    "eq": lambda a, *bs: any(_scalar(a) == _scalar(b) for b in bs),
    "ne": lambda a, b: _scalar(a) != _scalar(b),
    "len": lambda v: len(v),
    "index": _index,
}
