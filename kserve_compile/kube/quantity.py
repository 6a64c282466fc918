"""Kubernetes resource quantities: parsed exactly (``resource.ParseQuantity``) and written canonically
(``resource.Quantity.String()``: KServe builds containers with ``resource.MustParse``, so ``"1000m"`` becomes ``"1"``)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..provenance import with_origin_of

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
# Bounds no real quantity reaches, so that exact decimal arithmetic stays exact (see _canonical_text's precision).
_MAX_DIGITS, _MAX_EXPONENT = 64, 64
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def parse_quantity(value: str | int | float) -> Decimal:
    """The quantity's value in base units; ``ValueError`` naming the text when it is not a quantity."""
    return _parse_text(str(value).strip())


# The same few quantities (the ConfigMap's, above all) are checked and written for every pod: each distinct text is
# parsed once. Decimals and strings are immutable, so sharing the results is safe.
@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Decimal:
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    number, exponent, suffix = match.groups()
    if len(number) > _MAX_DIGITS or (exponent and abs(int(exponent[1:])) > _MAX_EXPONENT):
        raise ValueError(
            f"quantity {text!r} is out of range (at most {_MAX_DIGITS} digits, exponents up to {_MAX_EXPONENT})"
        )
    try:
        base = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"invalid quantity {text!r}") from exc
    if exponent:
        return base * (Decimal(10) ** int(exponent[1:]))
    return base * _SUFFIXES[suffix or ""]


def is_quantity(value: object) -> bool:
    if type(value) is str:  # the ConfigMap's quantities, checked for every pod: the verdict is remembered
        return _is_quantity_text(value)
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return bool(str(value).strip())


@lru_cache(maxsize=4096)
def _is_quantity_text(text: str) -> bool:
    try:
        _parse_text(text.strip())
    except ValueError:
        return False
    return bool(text.strip())


# Go's resource.ErrFormatWrong text, which KServe wraps into its own messages.
QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))


def canonical_quantity(text: str | float) -> str:
    """The canonical string of a valid quantity (``ValueError`` otherwise)."""
    return _canonical_text(str(text).strip())


@lru_cache(maxsize=4096)
def _canonical_text(raw: str) -> str:
    with localcontext() as ctx:
        ctx.prec = 2 * (_MAX_DIGITS + _MAX_EXPONENT) + 20  # every parsed quantity stays an exact integer of nanos
        return _canonical_in_context(raw)


def _canonical_in_context(raw: str) -> str:
    value = _parse_text(raw)
    sign = "-" if value < 0 else ""
    value = abs(value)
    if raw[-2:] in {s for _, s in _BINARY_SUFFIX} and value >= 1024 and value == value.to_integral_value():
        number = int(value)
        for power, suffix in _BINARY_SUFFIX:
            if number % (1 << power) == 0:
                return f"{sign}{number >> power}{suffix}"
        return f"{sign}{number}"
    exponent_form = "e" in raw.lower() and not raw.endswith(("Ei", "E"))
    # the smallest unit is 1n; Kubernetes rounds up below it
    nanos = (value * Decimal(10) ** 9).to_integral_value(rounding="ROUND_CEILING")
    if nanos == 0:
        return "0"
    exponent = -9
    while nanos % 1000 == 0 and exponent < 18:
        nanos //= 1000
        exponent += 3
    if exponent_form:
        return f"{sign}{nanos}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{nanos}{_DECIMAL_SUFFIX[exponent]}"


def requirements(
    section: str, cpu_limit: str, memory_limit: str, cpu_request: str, memory_request: str
) -> dict[str, dict[str, str]]:
    """``{limits: {cpu, memory}, requests: {cpu, memory}}`` as KServe builds it; bad values raise with KServe's words."""
    out: dict[str, dict[str, str]] = {"limits": {}, "requests": {}}
    for group, name, value in (
        ("limits", "cpu", cpu_limit),
        ("limits", "memory", memory_limit),
        ("requests", "cpu", cpu_request),
        ("requests", "memory", memory_request),
    ):
        if not is_quantity(value):
            raise InputError(
                f'failed to parse resource configuration for "{section}": {QUANTITY_FORMAT_ERROR}', f"data.{section}"
            )
        out[group][name] = canonical_quantity(value)
    return out


def quantities_as_strings(pod_spec: Any) -> None:
    """The numbers among a pod spec's container resources written as the quantity strings Kubernetes serves
    (``cpu: 6`` → ``"6"``), in place: KServe's controller holds them as ``resource.Quantity``, and server-side apply
    refuses a number where the schema has a string."""
    if not isinstance(pod_spec, dict):
        return
    for key in ("containers", "initContainers"):
        for container in pod_spec.get(key) or ():
            resources = container.get("resources") if isinstance(container, dict) else None
            for section in ("limits", "requests"):
                values = resources.get(section) if isinstance(resources, dict) else None
                if not isinstance(values, dict):
                    continue
                for name, value in values.items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool) and is_quantity(value):
                        values[name] = with_origin_of(value, canonical_quantity(value))
