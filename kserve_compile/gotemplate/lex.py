"""Go's ``text/template`` lexer (``text/template/parse/lex.go``), one action at a time.

Kept from Go: the trim markers need an ASCII space next to the dash (``{{- ``, `` -}}``; ``{{-3}}`` is the number
-3) and trim only ASCII white space (" \\t\\r\\n"); a comment must open right after the delimiter (and its trim
marker) and close right before the closing delimiter; tokens, their positions and the lexer's error messages are
Go's. A lex error becomes an ``error`` token at the point it happens, so the parser reports errors in the order
Go's lazy lexer and parser do.
"""

from __future__ import annotations

from typing import NamedTuple

from .quote import format_rune, go_quote, go_quote_prefix

SPACE = " \t\r\n"
LEFT, RIGHT = "{{", "}}"
KEYWORDS = frozenset({"block", "break", "continue", "define", "else", "end", "if", "range", "template", "with"})
_TERMINATORS = frozenset(SPACE + ".,|:)(")


class Token(NamedTuple):
    """``kind``: error space rdelim pipe lparen rparen string raw char number complex bool field dot nil ident
    keyword variable assign declare punct."""

    kind: str
    pos: int
    val: str


class LexFault(Exception):
    """A lex error outside an action (comments), at ``pos``."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def token_text(token: Token) -> str:
    """Go's ``item.String()``, as parse errors quote a token."""
    if token.kind == "error":
        return token.val
    if token.kind in ("keyword", "dot", "nil"):
        return f"<{token.val}>"
    if len(token.val.encode()) > 10:
        return go_quote_prefix(token.val) + "..."
    return go_quote(token.val)


def has_left_trim(source: str, pos: int) -> bool:
    """A trim marker right after a left delimiter ending at ``pos``."""
    return source.startswith("-", pos) and pos + 1 < len(source) and source[pos + 1] in SPACE


def _has_right_trim(source: str, pos: int) -> bool:
    return pos + 1 < len(source) and source[pos] in SPACE and source[pos + 1] == "-"


def _at_right_delim(source: str, pos: int) -> tuple[bool, bool]:
    """(at a right delimiter, with a trim marker before it)."""
    if _has_right_trim(source, pos) and source.startswith(RIGHT, pos + 2):
        return True, True
    return source.startswith(RIGHT, pos), False


def skip_space(source: str, pos: int) -> int:
    end = len(source)
    while pos < end and source[pos] in SPACE:
        pos += 1
    return pos


def lex_comment(source: str, pos: int) -> int:
    """The end of the comment opening at ``pos`` (``/*``), past the delimiter and what its trim marker trims."""
    close = source.find("*/", pos + 2)
    if close < 0:
        raise LexFault(pos, "unclosed comment")
    close += 2
    delim, trim = _at_right_delim(source, close)
    if not delim:
        raise LexFault(pos, "comment ends before closing delimiter")
    return skip_space(source, close + 4) if trim else close + 2


def lex_action(source: str, pos: int) -> tuple[list[Token], int]:
    """The tokens of the action whose body starts at ``pos``, ending with ``rdelim`` or ``error``, and where the
    text after it starts (past the spaces a right trim marker trims)."""
    tokens: list[Token] = []
    depth = 0
    while True:
        delim, trim = _at_right_delim(source, pos)
        if delim:
            if depth:
                tokens.append(Token("error", pos, "unclosed left paren"))
                return tokens, pos
            pos += 2 if trim else 0
            tokens.append(Token("rdelim", pos, RIGHT))
            pos += 2
            return tokens, skip_space(source, pos) if trim else pos
        if pos >= len(source):
            tokens.append(Token("error", pos, "unclosed action"))
            return tokens, pos
        token = _lex_one(source, pos)
        if token.kind == "error":
            tokens.append(token)
            return tokens, pos
        if token.kind == "lparen":
            depth += 1
        elif token.kind == "rparen":
            depth -= 1
            if depth < 0:
                tokens.append(Token("error", pos, "unexpected right paren"))
                return tokens, pos
        if token.val:  # a lone space before a trim-marked delimiter is part of the delimiter
            tokens.append(token)
        pos = token.pos + len(token.val)


def _lex_one(source: str, pos: int) -> Token:
    ch = source[pos]
    if ch in SPACE:
        end = skip_space(source, pos)
        if _has_right_trim(source, end - 1) and source.startswith(RIGHT, end + 1):
            end -= 1  # the last space belongs to " -}}"
        return Token("space", pos, source[pos:end])
    simple = _SIMPLE.get(ch)
    if simple is not None:
        return Token(simple, pos, ch)
    if ch == ":":
        if source.startswith(":=", pos):
            return Token("declare", pos, ":=")
        return Token("error", pos, "expected :=")
    if ch == "`":
        close = source.find("`", pos + 1)
        if close < 0:
            return Token("error", pos, "unterminated raw quoted string")
        return Token("raw", pos, source[pos : close + 1])
    if ch in _QUOTED:
        return _lex_quoted(source, pos)
    if ch == "$":
        return _lex_word(source, pos, pos + 1, "variable")
    if ch == "." and pos + 1 < len(source) and source[pos + 1] not in "0123456789":
        return _lex_word(source, pos, pos + 1, "field")
    if ch in "+-.0123456789":
        return _lex_number(source, pos)
    if is_alnum(ch):
        return _lex_word(source, pos, pos, "ident")
    if ch.isascii() and ch.isprintable():
        return Token("punct", pos, ch)
    return Token("error", pos, f"unrecognized character in action: {format_rune(ch)}")


_SIMPLE = {"=": "assign", "|": "pipe", "(": "lparen", ")": "rparen"}
_QUOTED = {'"': ("string", "unterminated quoted string"), "'": ("char", "unterminated character constant")}


def is_alnum(ch: str) -> bool:
    """Go's ``isAlphaNumeric``: ``_``, a letter or a decimal digit."""
    return ch == "_" or ch.isalpha() or ch.isdecimal()


def _at_terminator(source: str, pos: int) -> bool:
    return pos >= len(source) or source[pos] in _TERMINATORS or source.startswith(RIGHT, pos)


def _lex_word(source: str, start: int, pos: int, kind: str) -> Token:
    """An identifier, or a field/variable whose sigil ends at ``pos``; ``.``/``$`` alone when nothing follows."""
    if kind != "ident" and _at_terminator(source, pos):
        return Token("dot" if kind == "field" else kind, start, source[start:pos])
    end = len(source)
    while pos < end and is_alnum(source[pos]):
        pos += 1
    if not _at_terminator(source, pos):
        return Token("error", start, f"bad character {format_rune(source[pos])}")
    word = source[start:pos]
    if kind == "ident":
        kind = _WORD_KINDS.get(word, "ident")
    return Token(kind, start, word)


_WORD_KINDS = {**{k: "keyword" for k in KEYWORDS}, "nil": "nil", "true": "bool", "false": "bool"}


def _lex_quoted(source: str, start: int) -> Token:
    """A ``"…"`` string or ``'…'`` character constant, escapes skipped (the parser unquotes)."""
    quote = source[start]
    kind, unterminated = _QUOTED[quote]
    pos, end = start + 1, len(source)
    while True:
        if pos >= end or source[pos] == "\n":
            return Token("error", start, unterminated)
        if source[pos] == "\\":
            if pos + 1 >= end or source[pos + 1] == "\n":
                return Token("error", start, unterminated)
            pos += 2
            continue
        pos += 1
        if source[pos - 1] == quote:
            return Token(kind, start, source[start:pos])


def _lex_number(source: str, start: int) -> Token:
    ok, pos = _scan_number(source, start)
    if ok and pos < len(source) and source[pos] in "+-":  # a complex constant: 1+2i
        ok, pos = _scan_number(source, pos)
        if ok and source[pos - 1] == "i":
            return Token("complex", start, source[start:pos])
        ok = False
    if not ok:
        return Token("error", start, f"bad number syntax: {go_quote(source[start:pos])}")
    return Token("number", start, source[start:pos])


def _scan_number(source: str, pos: int) -> tuple[bool, int]:
    """Go's ``scanNumber``: a loose scan (the parser rejects what is not a number); False when a letter follows."""
    end = len(source)

    def accept(valid: str) -> bool:
        nonlocal pos
        if pos < end and source[pos] in valid:
            pos += 1
            return True
        return False

    def accept_run(valid: str) -> None:
        while accept(valid):
            pass

    accept("+-")
    digits = "0123456789_"
    if accept("0"):
        if accept("xX"):
            digits = "0123456789abcdefABCDEF_"
        elif accept("oO"):
            digits = "01234567_"
        elif accept("bB"):
            digits = "01_"
    accept_run(digits)
    if accept("."):
        accept_run(digits)
    if len(digits) == 11 and accept("eE"):
        accept("+-")
        accept_run("0123456789_")
    if len(digits) == 23 and accept("pP"):
        accept("+-")
        accept_run("0123456789_")
    accept("i")
    if pos < end and is_alnum(source[pos]):
        return False, pos + 1
    return True, pos
