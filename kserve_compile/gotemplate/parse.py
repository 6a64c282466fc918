"""The one template parser both kinds use: Go's ``text/template/parse`` (``parse.go``) for the constructs supported.

:func:`parse` turns a template into the tree of :mod:`.nodes`, with Go's grammar (``command ("|" command)*``,
operands, parenthesized pipelines, ``if``/``else if``/``else``/``end``), Go's checks (undefined functions,
non-executable pipeline stages, a ``.Field`` after a literal, ``{{else}}``/``{{end}}`` out of place …) and Go's
messages, each ``template: NAME:LINE: …``. What neither kind executes is rejected as
``unsupported template action "{{…}}": …``: ``range``, ``with``, ``define``, ``template``, ``block``, ``break``,
``continue``, variables, character, floating-point and complex constants, fields of a parenthesized pipeline.
Parenthesized pipelines nest at most 100 deep (Go allows 10,000), and so do ``if`` actions (Go sets no limit):
Python's stack is the limit here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NoReturn

from .errors import parse_error
from .lex import LEFT, SPACE, LexFault, Token, has_left_trim, lex_action, lex_comment, token_text
from .nodes import (
    Action,
    Bool,
    Branch,
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
    String,
    node_text,
)
from .quote import go_quote, go_unquote

# text/template's builtin functions (funcs.go): known to the parser, whether or not a kind executes them.
GO_BUILTINS = frozenset(
    "and call html index slice js len not or print printf println urlquery eq ge gt le lt ne".split()
)
MAX_PAREN_DEPTH = 100
MAX_IF_DEPTH = 100  # execution walks nested ifs recursively
_OPERAND_START = frozenset(
    {"bool", "char", "complex", "dot", "field", "ident", "number", "nil", "raw", "string", "variable", "lparen"}
)
_NOT_EXECUTABLE = (Bool, Dot, Nil, Number, String)
_FLOAT = re.compile(r"[+-]?(\d[\d_]*)?\.?[\d_]*([eE][+-]?\d+)?|[+-]?0[xX][\da-fA-F_.]*[pP][+-]?\d+")
_OCTAL = re.compile(r"0[0-7_]+")


def parse(source: str, name: str, funcs: Iterable[str] = ()) -> tuple[Node, ...]:
    """The tree of ``source``; ``funcs``: the caller's function names (Go's ``Funcs``)."""
    return _TemplateParser(source, name, GO_BUILTINS | frozenset(funcs)).run()


class _Open(list[Branch]):
    """An ``if`` being parsed: its branches so far, the node list it sits in, its position."""

    def __init__(self, pos: int, parent: list[Node]) -> None:
        super().__init__()
        self.pos = pos
        self.parent = parent


class _TemplateParser:
    def __init__(self, source: str, name: str, known: frozenset[str]) -> None:
        self.source = source
        self.name = name
        self.known = known

    def error(self, pos: int, message: str) -> NoReturn:
        raise parse_error(self.name, self.source, pos, message)

    def run(self) -> tuple[Node, ...]:
        source = self.source
        root: list[Node] = []
        stack: list[_Open] = []
        current = root
        pos = 0
        while True:
            left = source.find(LEFT, pos)
            if left < 0:
                _add_text(current, source[pos:])
                break
            inside = left + 2
            text = source[pos:left]
            if has_left_trim(source, inside):
                text = text.rstrip(SPACE)
                inside += 2
            _add_text(current, text)
            if source.startswith("/*", inside):
                try:
                    pos = lex_comment(source, inside)
                except LexFault as fault:
                    self.error(fault.pos, fault.message)
                continue
            tokens, pos = lex_action(source, inside)
            current = self.step(_ActionParser(self, tokens, left), current, stack)
        if stack:
            self.error(len(source), "unexpected EOF")
        return tuple(root)

    def step(self, action: _ActionParser, current: list[Node], stack: list[_Open]) -> list[Node]:
        """Add one action to the tree; the node list that the text after it goes to."""
        kind, pipe = action.action()
        text = action.text
        if kind == "action":
            assert pipe is not None
            current.append(Action(action.start, pipe, text))
            return current
        if kind == "if":
            if len(stack) >= MAX_IF_DEPTH:
                action.unsupported(f"if actions nest at most {MAX_IF_DEPTH} deep here")
            opened = _Open(action.start, current)
            opened.append(Branch(pipe, (), text))
            stack.append(opened)
            return []
        if not stack:
            self.error(action.start, "unexpected {{end}}" if kind == "end" else "unexpected {{else}}")
        opened = stack[-1]
        opened[-1] = opened[-1]._replace(body=tuple(current))
        if kind == "end":
            stack.pop()
            opened.parent.append(If(opened.pos, tuple(opened)))
            return opened.parent
        if opened[-1].cond is None:
            self.error(action.start, "expected end; found {{else}}")
        cond = action.pipeline("if", "rdelim") if kind == "else if" else None
        opened.append(Branch(cond, (), text))
        return []


def _add_text(nodes: list[Node], text: str) -> None:
    if text:  # Go keeps the text either side of a comment as two nodes, and so does this
        nodes.append(text)


class _ActionParser:
    """Recursive descent over one action's tokens (Go's ``Tree.action`` and below)."""

    def __init__(self, template: _TemplateParser, tokens: list[Token], start: int) -> None:
        self.template = template
        self.tokens = tokens
        self.index = 0
        self.start = start
        last = tokens[-1]
        self.text = template.source[start : last.pos + 2 if last.kind == "rdelim" else last.pos]
        self.depth = 0

    # --- tokens ---------------------------------------------------------------------------------------------
    def next(self) -> Token:  # the last token is rdelim or error: the grammar never reads past it
        token = self.tokens[self.index]
        self.index += 1
        return token

    def backup(self) -> None:
        self.index -= 1

    def peek(self) -> Token:
        return self.tokens[self.index]

    def next_non_space(self) -> Token:
        tokens, index = self.tokens, self.index
        token = tokens[index]
        while token.kind == "space":
            index += 1
            token = tokens[index]
        self.index = index + 1
        return token

    def peek_non_space(self) -> Token:
        token = self.next_non_space()
        self.backup()
        return token

    def expect(self, kind: str, context: str) -> Token:
        token = self.next_non_space()
        if token.kind != kind:
            self.unexpected(token, context)
        return token

    # --- errors ---------------------------------------------------------------------------------------------
    def error(self, pos: int, message: str) -> NoReturn:
        self.template.error(pos, message)

    def unexpected(self, token: Token, context: str) -> NoReturn:
        if token.kind != "error":
            self.error(token.pos, f"unexpected {token_text(token)} in {context}")
        source, name = self.template.source, self.template.name
        started = source.count("\n", 0, self.start) + 1
        extra = ""
        if started != source.count("\n", 0, token.pos) + 1:
            extra = f" in action started at {name}:{started}"
            if token.val.endswith(" action"):
                extra = extra[len(" in action") :]  # "unclosed action started at …", not "action in action"
        self.error(token.pos, token.val + extra)

    def unsupported(self, reason: str) -> NoReturn:
        self.error(self.start, f"unsupported template action {go_quote(self.text)}: {reason}")

    # --- grammar --------------------------------------------------------------------------------------------
    def action(self) -> tuple[str, Pipe | None]:
        """("action", pipe), ("if", condition), ("else", None), ("else if", None: the caller parses the condition
        once the ``else`` is known to be in place, as Go does) or ("end", None)."""
        token = self.next_non_space()
        if token.kind == "keyword":
            if token.val == "if":
                return "if", self.pipeline("if", "rdelim")
            if token.val == "else":
                return self.else_control()
            if token.val == "end":
                self.expect("rdelim", "end")
                return "end", None
            self.unsupported(f"{token.val} is not supported")
        self.backup()
        return "action", self.pipeline("command", "rdelim")

    def else_control(self) -> tuple[str, None]:
        following = self.peek_non_space()
        if following.kind == "keyword" and following.val == "if":
            self.next_non_space()
            return "else if", None
        if following.kind == "keyword" and following.val == "with":
            self.unsupported("with is not supported")
        self.expect("rdelim", "else")
        return "else", None

    def pipeline(self, context: str, end: str) -> Pipe:
        first = self.peek_non_space()
        if first.kind == "variable":
            self.unsupported("variables are not supported")
        cmds: list[Command] = []
        while True:
            token = self.next_non_space()
            if token.kind == end:
                self.check_pipeline(cmds, context, token)
                return Pipe(first.pos, tuple(cmds))
            if token.kind not in _OPERAND_START:
                self.unexpected(token, context)
            self.backup()
            cmds.append(self.command())

    def check_pipeline(self, cmds: list[Command], context: str, end: Token) -> None:
        if not cmds:
            self.error(end.pos, f"missing value for {context}")
        for stage, cmd in enumerate(cmds[1:], start=2):
            if isinstance(cmd.args[0], _NOT_EXECUTABLE):
                self.error(end.pos, f"non executable command in pipeline stage {stage}")

    def command(self) -> Command:
        pos = self.peek_non_space().pos
        args: list[Operand] = []
        while True:
            self.peek_non_space()
            operand = self.operand()
            if operand is not None:
                args.append(operand)
            token = self.next()
            if token.kind == "space":
                continue
            if token.kind in ("rdelim", "rparen"):
                self.backup()
            elif token.kind != "pipe":
                self.unexpected(token, "operand")
            break
        if not args:
            self.error(pos, "empty command")
        return Command(pos, tuple(args))

    def operand(self) -> Operand | None:
        node = self.term()
        if node is None or self.peek().kind != "field":
            return node
        chain_pos = self.peek().pos
        fields: list[str] = []
        while self.peek().kind == "field":
            fields.append(self.next().val[1:])
        if type(node) is Field:
            return Field(chain_pos, node.idents + tuple(fields))
        if isinstance(node, _NOT_EXECUTABLE):
            self.error(chain_pos, f"unexpected . after term {go_quote(node_text(node))}")
        self.unsupported("fields of a parenthesized pipeline or function result are not supported")

    def term(self) -> Operand | None:
        token = self.next_non_space()
        kind, pos = token.kind, token.pos
        if kind == "field":
            return Field(pos, (token.val[1:],))
        if kind in ("string", "raw"):
            try:
                return String(pos, token.val, go_unquote(token.val))
            except ValueError as exc:
                self.error(pos, str(exc))
        if kind == "ident":
            if token.val not in self.template.known:
                self.error(pos, f"function {go_quote(token.val)} not defined")
            return Identifier(pos, token.val)
        if kind == "dot":
            return Dot(pos)
        if kind == "nil":
            return Nil(pos)
        if kind == "bool":
            return Bool(pos, token.val == "true")
        if kind == "number":
            return self.number(token)
        if kind == "lparen":
            if self.depth >= MAX_PAREN_DEPTH:
                self.error(pos, "max expression depth exceeded")
            self.depth += 1
            pipe = self.pipeline("parenthesized pipeline", "rparen")
            self.depth -= 1
            return pipe
        if kind == "variable":
            self.unsupported("variables are not supported")
        if kind in ("char", "complex"):
            self.unsupported(f"{'character' if kind == 'char' else 'complex'} constants are not supported")
        self.backup()
        return None

    def number(self, token: Token) -> Number:
        text = token.val
        sign, digits = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
        if _OCTAL.fullmatch(digits):
            digits = "0o" + digits[1:]  # Go reads a leading 0 as octal
        try:
            return Number(token.pos, text, int(sign + digits, 0))
        except ValueError:
            pass
        if _FLOAT.fullmatch(text) and any(c.isdigit() for c in text):
            self.unsupported("floating-point constants are not supported")
        self.error(token.pos, f"illegal number syntax: {go_quote(text)}")
