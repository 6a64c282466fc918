"""Decoding and encoding JSON as KServe's router does with Go's ``encoding/json`` and ``interface{}`` values.

Go decodes every number into a ``float64`` and re-encodes it in the shortest form (``1.0`` → ``1``, ``1e20`` →
``100000000000000000000``, exponent form only below 1e-6 or from 1e21 up: ``1e+21``, ``1e-7``), sorts object keys,
escapes ``<``, ``>``, ``&``, U+2028 and U+2029, and writes no spaces. :func:`dumps` gets there from orjson's output
(sorted keys, compact) with two cheap fix-ups; numbers are rewritten only when orjson's text of one can differ from
Go's, which a regular-expression search finds without a Python-level walk of the data.

``kserve_compile.graph.gojson`` writes the *typed* graph spec for the renderer; the router is a separate image with
no dependency on the compiler, and it encodes arbitrary decoded data at request rate, hence this module.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import orjson

_HTML = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
# a number orjson may write differently from Go: "1.0", an exponent ("1e+20", "1e-7"), or 16+ digits (beyond
# float64's exact integers). Each test is a C-speed scan; a regular expression with a digit class at every position
# cost ~7 µs on a 150-byte answer, more than orjson's encoding of it.
_INTEGRAL_FLOAT = re.compile(rb"\.0(?![0-9])")
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0000000000")
_SIXTEEN_DIGITS = b"0" * 16
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*')
_EXACT_INT = 2**53


class DecodeError(ValueError):
    """The bytes are not JSON; the message is Go's wording where it matters to a caller."""


def loads(data: bytes) -> Any:
    """Decoded JSON; invalid UTF-8 is replaced by U+FFFD as Go's decoder does. Raises :class:`DecodeError`."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if not data.strip():
            raise DecodeError("unexpected end of JSON input") from None
        if "UTF-8" in str(err):
            try:
                return orjson.loads(data.decode("utf-8", "replace"))
            except orjson.JSONDecodeError:
                pass
        raise DecodeError(f"invalid JSON: {err}") from None


def valid(data: bytes) -> bool:
    """``json.Valid`` / ``gjson.ValidBytes``."""
    try:
        loads(data)
    except DecodeError:
        return False
    return True


def dumps(value: Any) -> bytes:
    """``json.Marshal`` of decoded JSON data."""
    out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if _may_differ(out):
        out = _TOKEN.sub(_fix_number, out)
    if b"<" in out or b">" in out or b"&" in out or b"\xe2\x80" in out:
        for raw, escaped in _HTML:
            out = out.replace(raw, escaped)
    return out


def _may_differ(out: bytes) -> bool:
    """Whether ``out`` may hold a number Go writes differently (false positives only cost the slow path)."""
    return (
        b"e+" in out
        or b"e-" in out
        or _INTEGRAL_FLOAT.search(out) is not None
        or (len(out) >= 16 and _SIXTEEN_DIGITS in out.translate(_DIGITS_AS_ZERO))
    )


def _fix_number(match: re.Match[bytes]) -> bytes:
    token = match.group()
    if token[0] == 0x22:  # a string: unchanged
        return token
    if b"." not in token and b"e" not in token and b"E" not in token and abs(int(token)) < _EXACT_INT:
        return token
    return go_float(float(token)).encode()


def go_float(value: float) -> str:
    """``strconv.FormatFloat`` as encoding/json calls it for a float64."""
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        return repr(value).replace("e-0", "e-")  # shortest digits; Go cleans e-07 to e-7, keeps e+21
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
