"""What the LLMInferenceService controller reads from the cluster, as explicit inputs with documented defaults.

KServe's controller reads the ``inferenceservice-config`` ConfigMap (``config_loader.go``: ``ingress``,
``storageInitializer``, ``credentials``), two environment variables (``LLM_INFERENCE_SERVICE_CONFIG_PREFIX``,
``LLM_INFERENCE_SERVICE_VERSIONED_CONFIG``) and live objects (Gateways, the HTTPRoute's InferencePool migration
state, installed CRDs). The first come from the ConfigMap input as KServe reads them; the rest from its
``llmisvcCompile`` data key, a JSON object kserve-compile defines (KServe ignores unknown keys). docs/llmisvc.md
lists every field and its default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError
from .names import POOL_GROUP_V1, POOL_GROUP_V1ALPHA2

OPTIONS_KEY = "llmisvcCompile"
WVA_KEY = "autoscaling-wva-controller-config"
DEFAULT_HEADER = "X-Gateway-Model-Name"
ROUTING_MODES = ("enabled", "forced", "disabled")
CERT_MODES = ("none", "cert-manager")


@dataclass(frozen=True)
class LLMOptions:
    """Controller settings and live-cluster facts one render uses."""

    system_namespace: str = "kserve"
    gateway_namespace: str = "kserve"
    gateway_name: str = "kserve-ingress-gateway"
    url_scheme: str = "http"
    enable_tls: bool = False
    routing_header: str = DEFAULT_HEADER
    routing_mode: str = "enabled"
    # llmisvcCompile: facts KServe reads from the environment or the live cluster
    config_prefix: str = "kserve-"
    versioned_config: bool = True
    pool_group: str = POOL_GROUP_V1ALPHA2
    emit_v1alpha2_pool: bool = True
    model_routing_disabled_gateways: frozenset[str] = field(default_factory=frozenset)
    self_signed_certificate: str = "none"
    cert_manager_issuer: tuple[str, str] = ("ClusterIssuer", "kserve-llmisvc-selfsigned")
    cluster_domain: str = "cluster.local"
    gateway_addresses: dict[str, str] = field(default_factory=dict)  # "ns/name" → base URL, for status
    # autoscaling-wva-controller-config.prometheus (None: the key is absent)
    wva_prometheus: dict[str, Any] | None = None


def _json(data: dict[str, Any], key: str) -> dict[str, Any]:
    raw = data.get(key)
    if raw is None:
        return {}
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise InputError(f"unable to unmarshall {key} json string due to {exc.msg}", f"data.{key}") from None
    if not isinstance(value, dict):
        raise InputError(f"{key} must be a JSON object", f"data.{key}")
    return value


def _lower(value: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in value.items()}  # Go's encoding/json matches names case-insensitively


def options_from_config(data: dict[str, Any] | None) -> LLMOptions:
    """Options from the ``inferenceservice-config`` data; ``InputError`` naming ``data.<key>`` on bad values."""
    data = data or {}
    ingress = _lower(_json(data, "ingress"))
    gateway = str(ingress.get("kserveingressgateway") or "")
    gw_ns, gw_name = "kserve", gateway
    if len(gateway.split("/")) == 2:
        gw_ns, gw_name = gateway.split("/")
    mode = str(ingress.get("modelbasedroutingmode") or "enabled").lower()
    base = LLMOptions(
        gateway_namespace=gw_ns,
        gateway_name=gw_name,
        url_scheme=str(ingress.get("urlscheme") or "http"),
        enable_tls=bool(ingress.get("enablellminferenceservicetls") or False),
        routing_header=str(ingress.get("modelbasedroutingheadername") or DEFAULT_HEADER),
        routing_mode=mode if mode in ROUTING_MODES else "enabled",
    )
    if WVA_KEY in data:
        base = replace(base, wva_prometheus=dict(_json(data, WVA_KEY).get("prometheus") or {}))
    return _with_compile_options(base, _json(data, OPTIONS_KEY))


def _with_compile_options(base: LLMOptions, raw: dict[str, Any]) -> LLMOptions:
    path = f"data.{OPTIONS_KEY}"
    known = {
        "configPrefix", "versionedConfig", "inferencePoolAPIGroup", "emitV1Alpha2InferencePool",
        "gatewaysWithModelRoutingDisabled", "selfSignedCertificate", "certManagerIssuer", "clusterDomain", "gatewayAddresses",
    }  # fmt: skip
    for key in raw:
        if key not in known:
            raise InputError(f"unknown field {key!r}; known: {', '.join(sorted(known))}", f"{path}.{key}")
    group = raw.get("inferencePoolAPIGroup", base.pool_group)
    if group not in (POOL_GROUP_V1, POOL_GROUP_V1ALPHA2):
        raise InputError(f"must be {POOL_GROUP_V1ALPHA2} or {POOL_GROUP_V1}", f"{path}.inferencePoolAPIGroup")
    certs = raw.get("selfSignedCertificate", base.self_signed_certificate)
    if certs not in CERT_MODES:
        raise InputError(f"must be one of {', '.join(CERT_MODES)}", f"{path}.selfSignedCertificate")
    issuer = raw.get("certManagerIssuer") or {}
    gateways = raw.get("gatewaysWithModelRoutingDisabled") or []
    if not isinstance(gateways, list) or not all(isinstance(g, str) and g.count("/") == 1 for g in gateways):
        raise InputError("must be a list of namespace/name strings", f"{path}.gatewaysWithModelRoutingDisabled")
    addresses = raw.get("gatewayAddresses") or {}
    if not isinstance(addresses, dict) or not all(
        isinstance(k, str) and k.count("/") == 1 and isinstance(v, str) for k, v in addresses.items()
    ):
        raise InputError('must map "namespace/name" of a Gateway to its base URL', f"{path}.gatewayAddresses")
    for key in ("versionedConfig", "emitV1Alpha2InferencePool"):
        if key in raw and not isinstance(raw[key], bool):
            raise InputError("must be true or false", f"{path}.{key}")
    return replace(
        base,
        config_prefix=str(raw.get("configPrefix", base.config_prefix)),
        versioned_config=raw.get("versionedConfig", base.versioned_config),
        pool_group=group,
        emit_v1alpha2_pool=raw.get("emitV1Alpha2InferencePool", base.emit_v1alpha2_pool),
        model_routing_disabled_gateways=frozenset(gateways),
        self_signed_certificate=certs,
        cert_manager_issuer=(
            str(issuer.get("kind", base.cert_manager_issuer[0])),
            str(issuer.get("name", base.cert_manager_issuer[1])),
        ),
        cluster_domain=str(raw.get("clusterDomain", base.cluster_domain)),
        gateway_addresses=dict(addresses),
    )
