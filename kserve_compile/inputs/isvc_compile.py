"""The ``isvcCompile`` key of ``inferenceservice-config``: settings kserve-compile defines for InferenceServices.

KServe ignores data keys it does not know, so this key changes nothing KServe reads. Unlike KServe's own keys it is
read strictly (an unknown or mistyped field is an error), since only kserve-compile reads it. Today it holds one
section, ``scaleToZero`` (docs/scale-to-zero.md)::

    isvcCompile: |-
      {"scaleToZero": {"enabled": true, "scaledownPeriod": 300,
                       "interceptor": {"namespace": "keda", "name": "keda-add-ons-http-interceptor-proxy", "port": 8080}}}

``enabled`` opts the cluster in: a Standard-mode component with ``minReplicas: 0`` scales to zero through KEDA's HTTP
add-on. ``interceptor`` names the add-on's interceptor Service; ``scaledownPeriod`` (seconds) is written to every
HTTPScaledObject (none: the add-on's default, 300).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..errors import InputError, unknown_field_message
from ..provenance import is_tracing
from ..provenance.sources import tag_config_json

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
INT32_MAX = 2147483647


@dataclass(frozen=True)
class Interceptor:
    """The add-on's interceptor Service: where routed traffic goes."""

    namespace: str = C.KEDA_HTTP_INTERCEPTOR_NAMESPACE
    name: str = C.KEDA_HTTP_INTERCEPTOR_SERVICE
    port: int = C.KEDA_HTTP_INTERCEPTOR_PORT

    @property
    def host(self) -> str:
        return f"{self.name}.{self.namespace}.svc.{C.CLUSTER_DOMAIN}"

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}:{self.port}"


@dataclass(frozen=True)
class ScaleToZeroSettings:
    enabled: bool = False
    interceptor: Interceptor = field(default_factory=Interceptor)
    scaledown_period: int | None = None


@dataclass(frozen=True)
class IsvcCompileConfig:
    scale_to_zero: ScaleToZeroSettings = field(default_factory=ScaleToZeroSettings)


def parse_isvc_compile(raw: Any) -> IsvcCompileConfig:
    """The key's value (a string holding JSON, as every data value); ``InputError`` naming ``data.isvcCompile.…``."""
    path = f"data.{C.ISVC_COMPILE_KEY}"
    if raw is None:
        return IsvcCompileConfig()
    if not isinstance(raw, str):
        raise InputError(f"the value of key {C.ISVC_COMPILE_KEY!r} must be a string holding JSON", path)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"unable to parse {C.ISVC_COMPILE_KEY} config json: {exc.msg} (line {exc.lineno} column {exc.colno})", path
        ) from None
    if is_tracing():
        value = tag_config_json(raw, C.ISVC_COMPILE_KEY, value)
    section = _object(value, path, ("scaleToZero",)).get("scaleToZero")
    if section is None:
        return IsvcCompileConfig()
    return IsvcCompileConfig(_scale_to_zero(section, f"{path}.scaleToZero"))


def _scale_to_zero(raw: Any, path: str) -> ScaleToZeroSettings:
    value = _object(raw, path, ("enabled", "interceptor", "scaledownPeriod"))
    enabled = value.get("enabled", False)
    if not isinstance(enabled, bool):
        raise InputError("must be true or false", f"{path}.enabled")
    period = value.get("scaledownPeriod")
    if period is not None:
        period = _integer(period, f"{path}.scaledownPeriod", 0, INT32_MAX)
    interceptor = Interceptor()
    if value.get("interceptor") is not None:
        interceptor = _interceptor(value["interceptor"], f"{path}.interceptor")
    return ScaleToZeroSettings(enabled, interceptor, period)


def _interceptor(raw: Any, path: str) -> Interceptor:
    value = _object(raw, path, ("namespace", "name", "port"))
    default = Interceptor()
    names = {}
    for key in ("namespace", "name"):
        text = value.get(key, getattr(default, key))
        if not isinstance(text, str) or not _DNS1123_LABEL.match(text) or len(text) > 63:
            raise InputError(
                f"must be a DNS-1123 label (the {key} of the add-on's interceptor Service)", f"{path}.{key}"
            )
        names[key] = text
    port = _integer(value.get("port", default.port), f"{path}.port", 1, 65535)
    return Interceptor(names["namespace"], names["name"], port)


def _object(value: Any, path: str, known: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError("must be a JSON object", path)
    for key in value:
        if key not in known:
            raise InputError(unknown_field_message(key, known), f"{path}.{key}")
    return value


def _integer(value: Any, path: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"must be an integer from {low} to {high}", path)
    return value
