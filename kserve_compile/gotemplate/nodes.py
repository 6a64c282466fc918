"""The parse tree both template kinds execute (the node kinds of Go's ``text/template/parse`` they support).

A template is a tuple of nodes: ``str`` (text), :class:`Action` (``{{pipeline}}``) and :class:`If` (an
``if``/``else if``/``else``/``end`` chain, its ``else if`` arms flattened into branches). Each node keeps ``pos``,
its offset in the source, for Go's error locations; :func:`node_text` prints an operand or pipeline as Go's
``Node.String`` does, for the ``at <…>`` part of execution errors.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias

from .quote import go_quote


class Field(NamedTuple):
    """``.A.B``: Go positions a chain of two or more fields at its second field."""

    pos: int
    idents: tuple[str, ...]


class Dot(NamedTuple):
    pos: int


class Nil(NamedTuple):
    pos: int


class Bool(NamedTuple):
    pos: int
    value: bool


class Number(NamedTuple):
    pos: int
    text: str
    value: int


class String(NamedTuple):
    pos: int
    quoted: str  # as written, quotes included
    text: str


class Identifier(NamedTuple):
    """A function name."""

    pos: int
    name: str


class Command(NamedTuple):
    pos: int
    args: tuple[Operand, ...]


class Pipe(NamedTuple):
    """``cmd | cmd …``; also an operand, when parenthesized."""

    pos: int
    cmds: tuple[Command, ...]


Operand: TypeAlias = Field | Dot | Nil | Bool | Number | String | Identifier | Pipe


class Action(NamedTuple):
    pos: int  # of its left delimiter
    pipe: Pipe
    text: str  # the action as written, delimiters included


class Branch(NamedTuple):
    cond: Pipe | None  # None: the ``else`` arm
    body: tuple[Node, ...]
    text: str  # the ``{{if …}}`` / ``{{else if …}}`` / ``{{else}}`` action as written


class If(NamedTuple):
    pos: int
    branches: tuple[Branch, ...]


Node: TypeAlias = str | Action | If


def node_text(node: Operand | Command) -> str:
    """Go's ``String()`` of an operand, command or pipeline."""
    kind = type(node)
    if kind is Field:
        return "." + ".".join(node.idents)  # type: ignore[union-attr]
    if kind is Command:
        return " ".join(f"({node_text(a)})" if type(a) is Pipe else node_text(a) for a in node.args)  # type: ignore[union-attr]
    if kind is Pipe:
        return " | ".join(node_text(c) for c in node.cmds)  # type: ignore[union-attr]
    return _LITERAL_TEXT[kind](node)


_LITERAL_TEXT = {
    Dot: lambda node: ".",
    Nil: lambda node: "nil",
    Bool: lambda node: "true" if node.value else "false",
    Number: lambda node: node.text,
    String: lambda node: node.quoted,
    Identifier: lambda node: node.name,
}


def tree_text(nodes: tuple[Node, ...], text_format: str = "%s") -> str:
    """Go's ``ListNode.String()`` of a parsed template (``else if`` arms printed nested, as Go's tree holds them);
    ``text_format="%q"`` quotes text nodes, as Go's parse tests print them."""
    out: list[str] = []
    for node in nodes:
        if type(node) is str:
            out.append(go_quote(node) if text_format == "%q" else node)
        elif type(node) is Action:
            out.append("{{" + node_text(node.pipe) + "}}")
        else:
            out.append(_if_text(node.branches, text_format))  # type: ignore[union-attr]
    return "".join(out)


def _if_text(branches: tuple[Branch, ...], text_format: str) -> str:
    first, rest = branches[0], branches[1:]
    text = "{{if " + node_text(first.cond) + "}}" + tree_text(first.body, text_format)  # type: ignore[arg-type]
    if rest:
        inner = tree_text(rest[0].body, text_format) if rest[0].cond is None else _if_text(rest, text_format)
        text += "{{else}}" + inner
    return text + "{{end}}"
