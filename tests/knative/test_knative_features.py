"""Knative's ``config-features``: the embedded shipped ConfigMap against Knative's own file, the flags each gated
field needs, and a given ConfigMap read as Knative reads it (``pkg/apis/config/features.go``)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kserve_compile import embedded
from kserve_compile.checks.knative_podspec import pod_spec_refusals
from kserve_compile.inputs.knative_features import (
    ENABLED,
    KnativeFeatures,
    load_features,
    shipped_features,
    shipped_version,
)
from kserve_compile.inputs.parse import parse_text

# The `_example` block of knative/serving config/core/configmaps/features.yaml at knative-v1.21.1 (commit
# 69aa052f143657969e5f0d7e0902088da6f22566), every uncommented `key: "value"` line in its order — the release KServe
# pins (kserve-deps.env). Its kubernetes.* keys and values are also the "defaults" of the official data set's
# pinned/serving.knative.dev/feature-gates.json; the other keys are Knative's non-pod-spec flags.
SHIPPED_EXAMPLE = {
    "secure-pod-defaults": "disabled",
    "multi-container": "enabled",
    "multi-container-probing": "disabled",
    "kubernetes.podspec-affinity": "disabled",
    "kubernetes.podspec-topologyspreadconstraints": "disabled",
    "kubernetes.podspec-hostaliases": "disabled",
    "kubernetes.podspec-nodeselector": "disabled",
    "kubernetes.podspec-tolerations": "disabled",
    "kubernetes.podspec-fieldref": "disabled",
    "kubernetes.podspec-runtimeclassname": "disabled",
    "kubernetes.podspec-dnspolicy": "disabled",
    "kubernetes.podspec-dnsconfig": "disabled",
    "kubernetes.podspec-securitycontext": "disabled",
    "kubernetes.podspec-shareprocessnamespace": "disabled",
    "kubernetes.podspec-hostipc": "disabled",
    "kubernetes.podspec-hostpid": "disabled",
    "kubernetes.podspec-hostnetwork": "disabled",
    "kubernetes.podspec-priorityclassname": "disabled",
    "kubernetes.podspec-schedulername": "disabled",
    "kubernetes.containerspec-addcapabilities": "disabled",
    "tag-header-based-routing": "disabled",
    "autodetect-http2": "disabled",
    "kubernetes.podspec-volumes-emptydir": "enabled",
    "kubernetes.podspec-volumes-image": "disabled",
    "kubernetes.podspec-volumes-hostpath": "disabled",
    "kubernetes.podspec-volumes-csi": "disabled",
    "kubernetes.podspec-init-containers": "disabled",
    "kubernetes.podspec-persistent-volume-claim": "disabled",
    "kubernetes.podspec-persistent-volume-write": "disabled",
    "kubernetes.podspec-volumes-mount-propagation": "disabled",
    "queueproxy.mount-podinfo": "disabled",
    "queueproxy.resource-defaults": "disabled",
}

# The "gates" of pinned/serving.knative.dev/feature-gates.json (the Knative Service CRD's "accessible behind a feature
# flag" fields at knative-v1.21.1, config/core/300-resources/service.yaml), with a value that sets each field.
GATES: dict[str, tuple[str, Any]] = {
    "spec.template.spec.affinity": ("kubernetes.podspec-affinity", {"nodeAffinity": {}}),
    "spec.template.spec.containers[].env[].valueFrom.fieldRef": ("kubernetes.podspec-fieldref", {"fieldPath": "x"}),
    "spec.template.spec.containers[].env[].valueFrom.resourceFieldRef": (
        "kubernetes.podspec-fieldref",
        {"resource": "limits.cpu"},
    ),
    "spec.template.spec.containers[].securityContext.capabilities.add": (
        "kubernetes.containerspec-addcapabilities",
        ["NET_ADMIN"],
    ),
    "spec.template.spec.containers[].volumeMounts[].mountPropagation": (
        "kubernetes.podspec-volumes-mount-propagation",
        "HostToContainer",
    ),
    "spec.template.spec.dnsConfig": ("kubernetes.podspec-dnsconfig", {"nameservers": ["1.1.1.1"]}),
    "spec.template.spec.dnsPolicy": ("kubernetes.podspec-dnspolicy", "Default"),
    "spec.template.spec.hostAliases": ("kubernetes.podspec-hostaliases", [{"ip": "1.1.1.1"}]),
    "spec.template.spec.hostIPC": ("kubernetes.podspec-hostipc", True),
    "spec.template.spec.hostNetwork": ("kubernetes.podspec-hostnetwork", True),
    "spec.template.spec.hostPID": ("kubernetes.podspec-hostpid", True),
    "spec.template.spec.initContainers": ("kubernetes.podspec-init-containers", [{"name": "i", "image": "i"}]),
    "spec.template.spec.nodeSelector": ("kubernetes.podspec-nodeselector", {"a": "b"}),
    "spec.template.spec.priorityClassName": ("kubernetes.podspec-priorityclassname", "high"),
    "spec.template.spec.runtimeClassName": ("kubernetes.podspec-runtimeclassname", "gvisor"),
    "spec.template.spec.schedulerName": ("kubernetes.podspec-schedulername", "mine"),
    "spec.template.spec.securityContext": ("kubernetes.podspec-securitycontext", {"runAsUser": 1}),
    "spec.template.spec.shareProcessNamespace": ("kubernetes.podspec-shareprocessnamespace", True),
    "spec.template.spec.tolerations": ("kubernetes.podspec-tolerations", [{"key": "k"}]),
    "spec.template.spec.topologySpreadConstraints": ("kubernetes.podspec-topologyspreadconstraints", [{"maxSkew": 1}]),
    "spec.template.spec.volumes[].csi": ("kubernetes.podspec-volumes-csi", {"driver": "d"}),
    "spec.template.spec.volumes[].emptyDir": ("kubernetes.podspec-volumes-emptydir", {}),
    "spec.template.spec.volumes[].hostPath": ("kubernetes.podspec-volumes-hostpath", {"path": "/x"}),
    "spec.template.spec.volumes[].image": ("kubernetes.podspec-volumes-image", {"reference": "r"}),
    "spec.template.spec.volumes[].persistentVolumeClaim": (
        "kubernetes.podspec-persistent-volume-claim",
        {"claimName": "c", "readOnly": True},
    ),
}


def test_the_embedded_config_features_is_knatives_shipped_one() -> None:
    shipped = embedded.documents(embedded.KNATIVE_FEATURES)[0]
    assert shipped["metadata"]["name"] == "config-features"
    assert shipped["metadata"]["namespace"] == "knative-serving"
    assert shipped["data"] == SHIPPED_EXAMPLE
    assert list(shipped["data"]) == list(SHIPPED_EXAMPLE)
    assert shipped_version() == "1.21.1"


def test_the_refresh_tooling_derives_it_from_knatives_file() -> None:
    """``python -m kserve_compile.embedded --knative-features`` writes the file from Knative's features.yaml."""
    example = "\n".join(
        ["# Indicates whether ...", "# kubernetes.podspec-x: 'not a line'", ""]
        + [f'{key}: "{value}"' for key, value in SHIPPED_EXAMPLE.items()]
    )
    knative_file = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "data": {"_example": example}})
    text = embedded.knative_features_yaml(knative_file, "1.21.1", "knative-v1.21.1@69aa052f")
    assert yaml.safe_load(text)["data"] == SHIPPED_EXAMPLE
    committed = (embedded.DATA / embedded.KNATIVE_FEATURES).read_text("utf-8")
    assert text.replace("69aa052f", "69aa052f143657969e5f0d7e0902088da6f22566") == committed


@pytest.mark.parametrize("path", sorted(GATES))
def test_each_gated_field_needs_its_flag(path: str) -> None:
    """A field behind a flag is refused under the shipped flags (emptyDir: allowed, its flag ships enabled), names
    that flag, and passes once the flag is enabled."""
    flag, value = GATES[path]
    service = {"spec": {"template": {"spec": _setting(path, value)}}}
    refusals = pod_spec_refusals(service, shipped_features())
    if SHIPPED_EXAMPLE[flag] == "enabled":
        assert refusals == []
    else:
        assert {r.flag for r in refusals} == {flag}, refusals
    enabled = KnativeFeatures({**shipped_features().flags, flag: ENABLED}, "test", given=True)
    assert pod_spec_refusals(service, enabled) == []


def _setting(path: str, value: Any) -> dict[str, Any]:
    """A valid pod spec that sets the gated field ``path`` to ``value``."""
    field = path.removeprefix("spec.template.spec.")
    container: dict[str, Any] = {"name": "c", "image": "c"}
    spec: dict[str, Any] = {"containers": [container]}
    if field.startswith("volumes[]."):
        spec["volumes"] = [{"name": "v", field.removeprefix("volumes[]."): value}]
        container["volumeMounts"] = [{"name": "v", "mountPath": "/v", "readOnly": True}]
    elif field.startswith("containers[].env[]"):
        container["env"] = [{"name": "E", "valueFrom": {field.rpartition(".")[2]: value}}]
    elif field.startswith("containers[].securityContext"):
        container["securityContext"] = {"capabilities": {"add": value}}
    elif field.startswith("containers[].volumeMounts[]"):
        spec["volumes"] = [{"name": "v", "emptyDir": {}}]
        container["volumeMounts"] = [{"name": "v", "mountPath": "/v", "mountPropagation": value}]
    else:
        spec[field] = value
    return spec


def _features(text: str) -> tuple[KnativeFeatures, list[str]]:
    features, problems = load_features(parse_text(text, "features.yaml"))
    return features, [p.format() for p in problems]


def test_a_given_config_features_is_read_as_knative_reads_it() -> None:
    features, problems = _features(
        """apiVersion: v1
kind: ConfigMap
metadata:
  name: config-features
  namespace: knative-serving
data:
  _example: "ignored"
  kubernetes.podspec-init-containers: "ENABLED"
  kubernetes.podspec-nodeselector: "allowed"
  secure-pod-defaults: "AllowRootBounded"
  kubernetes.podspec-persistent-volume-claim: "yes"
  kubernetes.podspec-init-container: "enabled"
"""
    )
    assert features.given and "features.yaml" in features.source
    assert features.value("kubernetes.podspec-init-containers") == "Enabled"
    assert features.value("kubernetes.podspec-nodeselector") == "Allowed"
    assert features.value("secure-pod-defaults") == "AllowRootBounded"
    assert features.value("kubernetes.podspec-persistent-volume-claim") == "Disabled"  # asFlag ignores "yes"
    assert features.value("kubernetes.podspec-tolerations") == "Disabled"  # absent: Knative's default
    assert problems == [
        "features.yaml:11:3: ConfigMap/config-features: data[kubernetes.podspec-persistent-volume-claim]: warning: "
        "Knative ignores the value 'yes' (not one of enabled, allowed, disabled) and keeps 'disabled'",
        "features.yaml:12:3: ConfigMap/config-features: data[kubernetes.podspec-init-container]: warning: "
        "Knative ignores the unknown key 'kubernetes.podspec-init-container'; did you mean "
        '"kubernetes.podspec-init-containers"?',
    ]


def test_secure_pod_defaults_has_its_own_values() -> None:  # asSecurePodDefaultsFlag: no "Allowed"
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config-features, namespace: knative-serving}\n"
    features, problems = _features(text + "data: {secure-pod-defaults: allowed}\n")
    assert features.value("secure-pod-defaults") == "Disabled"
    assert len(problems) == 1 and "allowroot" in problems[0].lower()


def test_bad_data_is_an_error_and_a_config_features_elsewhere_is_not_read() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config-features, namespace: knative-serving}\n"
    features, problems = _features(text + "data: [a]\n")
    assert not features.given and problems == [
        "features.yaml:4:1: ConfigMap/config-features: data: data must be a mapping of strings"
    ]
    _, problems = _features(text + "data: {kubernetes.podspec-affinity: 3}\n")
    assert problems and "must be a string" in problems[0] and ": warning:" not in problems[0]
    other = text.replace("knative-serving", "default") + "data: {kubernetes.podspec-affinity: enabled}\n"
    features, problems = _features(other)
    assert not features.given and problems == []
