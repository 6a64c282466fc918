"""Go's string quoting, as ``text/template`` uses it: ``strconv.Quote`` (``%q`` in messages), ``%.10q``, ``%#U``
and ``strconv.Unquote`` (string constants in actions)."""

from __future__ import annotations

import re

from ..errors import go_quote

_UNESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
_ESCAPE = re.compile(r"\\(?:[abfnrtv\\'\"]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{3})|\\")


def go_quote_prefix(text: str, runes: int = 10) -> str:
    """``%.10q``: the first ``runes`` characters, quoted."""
    return go_quote(text[:runes])


def format_rune(ch: str) -> str:
    """``%#U``: ``U+0023 '#'`` (the character only when printable)."""
    return f"U+{ord(ch):04X}" + (f" '{ch}'" if ch.isprintable() else "")


def go_unquote(literal: str) -> str:
    """``strconv.Unquote`` of a ``"…"`` or `` `…` `` constant; ``ValueError("invalid syntax")`` as Go's ErrSyntax."""
    if len(literal) < 2 or literal[0] != literal[-1] or literal[0] not in '"`':
        raise ValueError("invalid syntax")
    body = literal[1:-1]
    if literal[0] == "`":
        if "`" in body:
            raise ValueError("invalid syntax")
        return body.replace("\r", "")  # Go drops carriage returns from raw strings
    if "\\" not in body:
        if '"' in body or "\n" in body:
            raise ValueError("invalid syntax")
        return body
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(body):
        plain = body[pos : match.start()]
        if '"' in plain or "\n" in plain:
            raise ValueError("invalid syntax")
        out += plain.encode()
        out += _unescape(match.group(0))
        pos = match.end()
    rest = body[pos:]
    if '"' in rest or "\n" in rest:
        raise ValueError("invalid syntax")
    out += rest.encode()
    return out.decode("utf-8", errors="replace")  # \x and octal escapes are bytes in Go; invalid UTF-8 → U+FFFD


def _unescape(escape: str) -> bytes:
    kind = escape[1:2]
    if kind in _UNESCAPES:
        return bytes([_UNESCAPES[kind]])
    if kind == '"':
        return b'"'
    if kind == "x":
        return bytes([int(escape[2:], 16)])
    if kind in ("u", "U"):
        code = int(escape[2:], 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise ValueError("invalid syntax")
        return chr(code).encode()
    if kind.isdigit():
        code = int(escape[1:], 8)
        if code > 255:
            raise ValueError("invalid syntax")
        return bytes([code])
    raise ValueError("invalid syntax")  # a lone backslash, or \' inside "…"
