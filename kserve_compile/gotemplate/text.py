""":class:`GoTextTemplate`: the control-flow kind — LLMInferenceServiceConfig presets.

KServe executes a merged LLMInferenceServiceConfig as one Go ``text/template`` with ``missingkey=error``
(``ReplaceVariables`` in pkg/controller/v1alpha2/llmisvc/config_merge.go). Over the shared parser's tree
(:mod:`.parse`) this kind executes ``{{ if P }}…{{ else if P }}…{{ else }}…{{ end }}``, pipelines (``a | f``),
operands (field chains, ``"…"`` and raw strings, integers, ``nil``, ``true``/``false``, parentheses), the builtins
``and``/``or`` (lazy, as since Go 1.18), ``not``, ``eq``, ``ne``, ``len``, ``index`` and the caller's functions,
as ``exec.go`` evaluates them (argument counts checked, ``error calling F: …``). Go semantics kept: a nil pointer
is false and cannot be walked through; a pointer to a scalar (:class:`GoPtr`) is true even when it points at zero,
and prints its value. Go's other builtins (``printf`` …) are ``unsupported template action …``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from .errors import ExecFault, TemplateError, exec_error, parse_error
from .nodes import (
    Action,
    Bool,
    Command,
    Dot,
    Field,
    Identifier,
    If,
    Nil,
    Node,
    Number,
    Operand,
    Pipe,
    node_text,
)
from .parse import parse
from .quote import go_quote
from .values import MISSING, GoPtr, Struct, go_index, go_len, go_print, go_truth, walk_fields

_NOT_PIPED = object()  # no value from a previous pipeline stage (Go's missingVal)


def _scalar(value: Any) -> Any:
    return value.value if isinstance(value, GoPtr) else value


def _eq(first: Any, *others: Any) -> bool:
    if not others:
        raise ValueError("missing argument for comparison")
    return any(_scalar(first) == _scalar(other) for other in others)


# name → (function, fixed argument count, variadic); and/or are evaluated lazily in _call.
_BUILTINS: dict[str, tuple[Callable[..., Any], int, bool]] = {
    "and": (lambda *args: None, 1, True),
    "or": (lambda *args: None, 1, True),
    "not": (lambda value: not go_truth(value), 1, False),
    "eq": (_eq, 1, True),
    "ne": (lambda a, b: _scalar(a) != _scalar(b), 2, False),
    "len": (go_len, 1, False),
    "index": (go_index, 1, True),
}


class GoTextTemplate:
    """A parsed ``text/template`` of the control-flow kind; executes with ``missingkey=error``. ``name`` is the
    template's name, as Go's messages print it."""

    def __init__(self, source: str, funcs: Mapping[str, Any] | None = None, *, name: str = "template") -> None:
        self.source = source
        self.name = name
        self.funcs = dict(funcs or {})
        self._tree = parse(source, name, self.funcs)
        self._arity = {fn_name: _arity(fn) for fn_name, fn in self.funcs.items()}
        self._check(self._tree)
        self.chains: tuple[str, ...] = tuple(sorted(_chains(self._tree)))

    def digest(self, chain: str, data: Any) -> Any:
        """A hashable digest of what ``chain`` reads from ``data``: data whose digests agree for every chain in
        :attr:`chains` render the same text, since the functions are pure (a value may narrow its own digest with a
        ``template_digest`` method)."""
        return chain_digest(chain, data)

    def render(self, data: Any) -> str:
        out: list[str] = []
        try:
            self._walk(self._tree, data, out)
        except ExecFault as fault:
            node: Any = fault.node
            raise exec_error(self.name, self.source, node.pos, node_text(node), fault.message) from None
        return "".join(out)

    # --- the subset check ----------------------------------------------------------------------------------
    def _check(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            if type(node) is Action:
                self._check_pipe(node.pipe, node.pos, node.text)
            elif type(node) is If:
                for branch in node.branches:
                    if branch.cond is not None:
                        self._check_pipe(branch.cond, node.pos, branch.text)
                    self._check(branch.body)

    def _check_pipe(self, pipe: Pipe, pos: int, text: str) -> None:
        for cmd in pipe.cmds:
            for arg in cmd.args:
                if type(arg) is Pipe:
                    self._check_pipe(arg, pos, text)
                elif type(arg) is Identifier and arg.name not in self.funcs and arg.name not in _BUILTINS:
                    message = f"unsupported template action {go_quote(text)}: {arg.name} is not supported"
                    raise parse_error(self.name, self.source, pos, message)

    # --- execution (exec.go) -------------------------------------------------------------------------------
    def _walk(self, nodes: tuple[Node, ...], data: Any, out: list[str]) -> None:
        for node in nodes:
            if type(node) is str:
                out.append(node)
            elif type(node) is Action:
                out.append(go_print(self._pipe(node.pipe, data)))
            else:
                for branch in node.branches:  # type: ignore[union-attr]
                    if branch.cond is None or go_truth(self._pipe(branch.cond, data)):
                        self._walk(branch.body, data, out)
                        break

    def _pipe(self, pipe: Pipe, data: Any) -> Any:
        value: Any = _NOT_PIPED
        try:
            for cmd in pipe.cmds:
                value = self._cmd(cmd, data, value)
        except ExecFault as fault:
            fault.node = fault.node or pipe  # where Go's state.at last pointed: the pipeline
            raise
        return value

    def _cmd(self, cmd: Command, data: Any, final: Any) -> Any:
        first = cmd.args[0]
        kind = type(first)
        if kind is Field:
            return self._field(first, data, cmd, final)  # type: ignore[arg-type]
        if kind is Identifier:
            return self._call(first, cmd, data, final)  # type: ignore[arg-type]
        if len(cmd.args) > 1 or final is not _NOT_PIPED:
            raise ExecFault(f"can't give argument to non-function {node_text(first)}", None if kind is Pipe else first)
        if kind is Nil:
            raise ExecFault("nil is not a command", first)
        return self._arg(first, data)

    def _arg(self, node: Operand, data: Any) -> Any:
        kind = type(node)
        if kind is Field:
            return self._field(node, data, None, _NOT_PIPED)  # type: ignore[arg-type]
        if kind is Identifier:
            return self._call(node, node, data, _NOT_PIPED)  # type: ignore[arg-type]
        if kind is Pipe:
            return self._pipe(node, data)  # type: ignore[arg-type]
        if kind is Dot:
            return data
        if kind is Nil:
            return None
        return node.value if kind in (Bool, Number) else node.text  # type: ignore[union-attr]

    def _field(self, node: Field, data: Any, cmd: Command | None, final: Any) -> Any:
        try:
            if (cmd is not None and len(cmd.args) > 1) or final is not _NOT_PIPED:
                _field_with_args(data, node.idents)
            return walk_fields(data, node.idents, True)
        except ExecFault as fault:
            raise ExecFault(fault.message, node) from None

    def _call(self, ident: Identifier, cmd: Command | Identifier, data: Any, final: Any) -> Any:
        name = ident.name
        fn = self.funcs.get(name)
        arity: tuple[int, bool] | None
        if fn is not None:
            arity = self._arity[name]
        else:
            fn, fixed, variadic = _BUILTINS[name]
            arity = (fixed, variadic)
        args = cmd.args[1:] if type(cmd) is Command else ()
        count = len(args) + (final is not _NOT_PIPED)
        if arity is not None:
            fixed, variadic = arity
            if variadic and count < fixed:
                raise ExecFault(f"wrong number of args for {name}: want at least {fixed} got {len(args)}", ident)
            if not variadic and count != fixed:
                raise ExecFault(f"wrong number of args for {name}: want {fixed} got {count}", ident)
        if name in ("and", "or") and name not in self.funcs:
            return self._and_or(name == "or", args, data, final)
        values = [self._arg(arg, data) for arg in args]
        if final is not _NOT_PIPED:
            values.append(final)
        try:
            return fn(*values)
        except TemplateError:
            raise
        except (TypeError, ValueError) as exc:
            raise ExecFault(f"error calling {name}: {exc}", cmd) from None

    def _and_or(self, want: bool, args: tuple[Operand, ...], data: Any, final: Any) -> Any:
        value = None
        for arg in args:
            value = self._arg(arg, data)
            if go_truth(value) == want:
                return value
        return final if final is not _NOT_PIPED else value


def _field_with_args(data: Any, idents: tuple[str, ...]) -> None:
    """``.X arg``: Go's errors for giving arguments to a field (no method is ever found here)."""
    receiver = walk_fields(data, idents[:-1], True)
    last = idents[-1]
    if isinstance(receiver, Struct) and last in receiver:
        raise ExecFault(f"{last} has arguments but cannot be invoked as function")
    if isinstance(receiver, Mapping) and not isinstance(receiver, Struct):
        raise ExecFault(f"{last} is not a method but has arguments")
    walk_fields(receiver, (last,), True)  # raises the field's own error


def _arity(fn: Any) -> tuple[int, bool] | None:
    """(required positional arguments, takes more), as Go checks a function's argument count; None: unknown."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    fixed, variadic = 0, False
    for param in signature.parameters.values():
        if param.kind is param.VAR_POSITIONAL or param.default is not param.empty:
            variadic = True
        elif param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            fixed += 1
    return fixed, variadic


def _chains(nodes: Iterable[Node]) -> set[str]:
    out: set[str] = set()

    def from_pipe(pipe: Pipe) -> None:
        for cmd in pipe.cmds:
            for arg in cmd.args:
                if type(arg) is Pipe:
                    from_pipe(arg)
                elif type(arg) is Field:
                    out.add("." + ".".join(arg.idents))
                elif type(arg) is Dot:
                    out.add(".")

    for node in nodes:
        if type(node) is Action:
            from_pipe(node.pipe)
        elif type(node) is If:
            for branch in node.branches:
                if branch.cond is not None:
                    from_pipe(branch.cond)
                out.update(_chains(branch.body))
    return out


def chain_digest(chain: str, data: Any) -> Any:
    """The digest :meth:`GoTextTemplate.digest` gives, for any template reading ``chain``."""
    return _freeze(_lenient_fields(chain, data))


def _lenient_fields(chain: str, data: Any) -> Any:
    try:
        return walk_fields(data, _chain_names(chain), True)
    except ExecFault:
        return MISSING


@lru_cache(maxsize=4096)  # digests are taken per chain per service; the chains are a few hundred
def _chain_names(chain: str) -> tuple[str, ...]:
    return () if chain == "." else tuple(chain.split(".")[1:])


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
    if value is MISSING:
        return ("missing",)
    return (type(value).__name__, value)
