"""Go's encoding/json bytes for decoded data (the router's re-encoded bodies)."""

from __future__ import annotations

import pytest

from router.gojson import DecodeError, dumps, go_float, loads, valid


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "-0"),
        (0.1, "0.1"),
        (123.0, "123"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e-10, "1e-10"),
        (1.5e300, "1.5e+300"),
        (1.2345678901234568e20, "123456789012345680000"),
        (1e-5, "0.00001"),
    ],
)
def test_go_float(value: float, text: str) -> None:
    assert go_float(value) == text
    assert dumps(value) == text.encode()


def test_dumps_sorts_keys_escapes_html_and_keeps_strings() -> None:
    value = {"b": [1.0, "x 1.0]", {"<a>": "&"}], "a": "\u2028", "c": 2**63, "d": 12}
    assert (
        dumps(value) == b'{"a":"\\u2028","b":[1,"x 1.0]",{"\\u003ca\\u003e":"\\u0026"}],"c":9223372036854776000,"d":12}'
    )


def test_dumps_control_characters_as_go() -> None:
    assert dumps("\x00\b\f\n\x1f\x7f") == b'"\\u0000\\b\\f\\n\\u001f\x7f"'


def test_loads() -> None:
    assert loads(b'{"a":[1,2.5]}') == {"a": [1, 2.5]}
    assert loads(b'"\xff"') == "\ufffd"
    with pytest.raises(DecodeError, match="unexpected end of JSON input"):
        loads(b"")
    with pytest.raises(DecodeError):
        loads(b"{nope")
    assert valid(b"5") and valid(b"null") and not valid(b"") and not valid(b"text")
