"""kserve_compile.durations: Go's time.ParseDuration syntax for every time flag."""

from __future__ import annotations

import pytest

from kserve_compile.durations import DurationError, format_duration, parse_duration


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90s", 90.0),
        ("5m", 300.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("250ms", 0.25),
        ("1.5s", 1.5),
        ("2m3s", 123.0),
        ("0s", 0.0),
        ("600", 600.0),
        ("0.5", 0.5),
        (" 10s ", 10.0),
        ("100us", 1e-4),
    ],
)
def test_parses(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "5x", "-5s", "5 s", "1h-2m", "m5", "5m junk", "1d"])
def test_rejects_with_a_clear_message(text):
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert repr(text) in str(err.value) and "90s" in str(err.value)


@pytest.mark.parametrize("seconds, text", [(600, "10m"), (90, "1m30s"), (3600, "1h"), (0.25, "0.25s"), (0, "0s")])
def test_formats(seconds, text):
    assert format_duration(seconds) == text
    assert parse_duration(text) == seconds
