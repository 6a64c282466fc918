"""Durations as Kubernetes tools spell them on the command line: ``90s``, ``5m``, ``1h30m``, ``250ms``.

Mirrors the flag syntax of kubectl (``--timeout``, ``--request-timeout``) and controller-runtime
(``--sync-period``), which both parse with Go's ``time.ParseDuration``: a sequence of decimal numbers,
each with a unit (``ns``, ``us``/``µs``, ``ms``, ``s``, ``m``, ``h``). A bare number is taken as seconds,
as kubectl's ``--request-timeout=5`` is. Negative durations are refused: no flag here means "the past".
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TERM = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")


class DurationError(ValueError):
    """A duration that does not parse; the message names the value and the accepted forms."""


def parse_duration(text: str) -> float:
    """Seconds in ``text``; raises :class:`DurationError` for anything else."""
    value = str(text).strip()
    if _NUMBER.fullmatch(value):
        return float(value)
    pos, total = 0, 0.0
    for match in _TERM.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(value) or not value:
        raise DurationError(f"invalid duration {text!r}: use a number with a unit, e.g. 90s, 5m, 1h, 1h30m, 250ms")
    return total


def format_duration(seconds: float) -> str:
    """The shortest ``h``/``m``/``s`` spelling of whole seconds (``600`` → ``10m``), for help texts."""
    whole = int(seconds)
    if whole != seconds or whole == 0:
        return f"{seconds:g}s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
