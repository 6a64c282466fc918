"""Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``) parsed exactly, as ``resource.ParseQuantity``."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def parse_quantity(value: str | int | float) -> Decimal:
    """The quantity's value in base units; ``ValueError`` naming the text when it is not a quantity."""
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    number, exponent, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"invalid quantity {text!r}") from exc
    if exponent:
        return base * (Decimal(10) ** int(exponent[1:]))
    return base * _SUFFIXES[suffix or ""]


def is_quantity(value: object) -> bool:
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True
