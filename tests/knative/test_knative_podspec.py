"""Knative's pod-spec admission (``checks/knative_podspec.py``), case by case from Knative's own tests.

Each case is translated from knative/serving ``pkg/apis/serving/k8s_validation_test.go`` at knative-v1.21.1 (the
release KServe pins) and names its test function and case. Knative's tests call the validators directly; the
admission path KServe's Services take (``Service.SetDefaults`` then ``Validate``) defaults first, and the checks do
too, so a case whose outcome the defaults change says so. Paths are the Knative Service's
(``spec.template.spec...``); Knative's own paths are relative to the pod spec or the container.
"""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile.checks.knative_podspec import SPEC, pod_spec_refusals
from kserve_compile.inputs.knative_features import ALLOW_ROOT_BOUNDED, ENABLED, KnativeFeatures, shipped_features


def features(**flags: str) -> KnativeFeatures:
    """Knative's shipped flags with ``flags`` (``podspec_init_containers="Enabled"``) over them."""
    values = dict(shipped_features().flags)
    for name, value in flags.items():
        key = name.replace("_", "-")
        key = key if key in values else f"kubernetes.{key}"
        assert key in values, key
        values[key] = value
    return KnativeFeatures(values, "test", given=True)


def refused(pod_spec: dict[str, Any], **flags: str) -> set[str]:
    service = {"spec": {"template": {"spec": pod_spec}}}
    return {r.path.removeprefix(SPEC + ".") for r in pod_spec_refusals(service, features(**flags))}


def one(container: dict[str, Any], volumes: list[dict[str, Any]] | None = None, **flags: str) -> set[str]:
    """A pod spec of one container (``TestUserContainerValidation``'s cases), with ``volumes``."""
    spec: dict[str, Any] = {"containers": [{"image": "foo", **container}]}
    if volumes:
        spec["volumes"] = volumes
    return refused(spec, **flags)


BUSYBOX = {"image": "busybox"}
SECRET = {"name": "the-name", "secret": {"secretName": "foo"}}
CONFIGMAP = {"name": "the-name", "configMap": {"name": "test-cm"}}


# --- TestPodSpecValidation ------------------------------------------------------------------------------------------


def test_valid_pod_spec() -> None:  # TestPodSpecValidation "valid", "with volume (ok)"
    assert refused({"containers": [{"image": "helloworld"}]}) == set()
    mount = {"mountPath": "/mount/path", "name": "the-name", "readOnly": True}
    assert refused({"containers": [{"image": "helloworld", "volumeMounts": [mount]}], "volumes": [SECRET]}) == set()


def test_automount_service_account_token() -> None:
    # TestPodSpecValidation "with automountServiceAccountToken (ok)" / "... = true"
    assert refused({"automountServiceAccountToken": False, "containers": [BUSYBOX]}) == set()
    assert refused({"automountServiceAccountToken": True, "containers": [BUSYBOX]}) == {"automountServiceAccountToken"}


def test_volume_name_collision() -> None:  # TestPodSpecValidation "with volume name collision"
    mount = {"mountPath": "/mount/path", "name": "the-name", "readOnly": True}
    spec = {"containers": [{"image": "hello", "volumeMounts": [mount]}], "volumes": [SECRET, CONFIGMAP]}
    assert refused(spec) == {"volumes[1].name"}


def test_volume_mount_path_collision() -> None:  # TestPodSpecValidation "with volume mount path collision"
    mounts = [
        {"mountPath": "/mount/path", "name": "the-foo", "readOnly": True},
        {"mountPath": "/mount/path", "name": "the-bar", "readOnly": True},
    ]
    volumes = [{"name": "the-foo", "secret": {"secretName": "foo"}}, {"name": "the-bar", "secret": {"secretName": "b"}}]
    assert refused({"containers": [{"image": "hello", "volumeMounts": mounts}], "volumes": volumes}) == {
        "containers[0].volumeMounts[1].mountPath"
    }


def test_multi_container_off() -> None:  # TestPodSpecValidation "too many containers" (withMultiContainerDisabled)
    spec = {"containers": [{"image": "busybox", "ports": [{}]}, {"image": "helloworld"}]}
    assert refused(spec, multi_container="Disabled") == {"containers"}
    assert refused(spec) == set()  # multi-container is enabled in the shipped config-features


def test_bad_service_account_name() -> None:  # TestPodSpecValidation "bad service account name"
    assert refused({"containers": [BUSYBOX], "serviceAccountName": "foo@bar.baz"}) == {"serviceAccountName"}


def test_init_containers_and_their_volumes() -> None:
    # TestPodSpecValidation "init containers with no mounted volume", "... and one not mounted"
    init = {"image": "busybox", "name": "install-nodejs-debug-support"}
    mount = {"name": "debugging-support-files", "mountPath": "/dbg"}
    volume = {"name": "debugging-support-files", "emptyDir": {}}
    spec = {"initContainers": [init], "containers": [{**BUSYBOX, "volumeMounts": [mount]}], "volumes": [volume]}
    assert refused(spec, podspec_init_containers=ENABLED) == set()
    unmounted = {
        "initContainers": [init],
        "containers": [{**BUSYBOX, "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [volume, {"name": "data", "emptyDir": {}}],
    }
    assert refused(unmounted, podspec_init_containers=ENABLED) == {"volumes[0].name"}


def test_init_container_name_collision() -> None:  # TestPodSpecValidation "init-container name collision"
    spec = {"initContainers": [{"name": "the-name", **BUSYBOX}], "containers": [{"name": "the-name", **BUSYBOX}]}
    assert refused(spec, podspec_init_containers=ENABLED) == {"initContainers[0].name"}


def test_container_name_collision() -> None:  # TestPodSpecValidation "container name collision"
    spec = {
        "containers": [
            {"name": "the-name", **BUSYBOX, "ports": [{"containerPort": 8888}]},
            {"name": "the-name", **BUSYBOX},
        ]
    }
    assert refused(spec) == {"containers[1].name"}


def _pvc(claim_read_only: bool, mount_read_only: bool) -> dict[str, Any]:
    mount = {"name": "foo", "mountPath": "/data", "readOnly": mount_read_only}
    claim = {"claimName": "myclaim", "readOnly": claim_read_only}
    return {
        "containers": [{**BUSYBOX, "volumeMounts": [mount]}],
        "volumes": [{"name": "foo", "persistentVolumeClaim": claim}],
    }


@pytest.mark.parametrize(
    ("case", "claim_ro", "mount_ro", "write", "want"),
    [
        ("PVC not read-only, mount read-only, write disabled by default", False, True, False, {"readOnly"}),
        ("PVC not read-only, mount not read-only, write disabled by default", False, False, False, {"readOnly"}),
        ("PVC read-only, mount not read-only, write disabled by default", True, False, False, {"mount"}),
        ("PVC read-only, write disabled by default", True, True, False, set()),
        ("PVC not read-only, write enabled", False, True, True, set()),
        ("PVC read-only, write enabled", False, False, True, set()),
    ],
)
def test_persistent_volume_claims(case: str, claim_ro: bool, mount_ro: bool, write: bool, want: set[str]) -> None:
    # TestPodSpecValidation, the six "PVC ..." cases (withPodSpecPersistentVolumeClaimEnabled)
    flags = {"podspec_persistent_volume_claim": ENABLED}
    if write:
        flags["podspec_persistent_volume_write"] = ENABLED
    paths = {
        "readOnly": "volumes[0].persistentVolumeClaim.readOnly",
        "mount": "containers[0].volumeMounts[0].readOnly",
    }
    assert refused(_pvc(claim_ro, mount_ro), **flags) == {paths[w] for w in want}, case


def test_mount_propagation() -> None:
    # TestPodSpecValidation "mount uses mountPropagation, but the feature is not enabled", "mount uses
    # mountPropagation", "... Bidirectional, which is disallowed ..."
    spec = _pvc(False, False)
    flags = {"podspec_persistent_volume_claim": ENABLED, "podspec_persistent_volume_write": ENABLED}
    spec["containers"][0]["volumeMounts"][0]["mountPropagation"] = "HostToContainer"
    path = "containers[0].volumeMounts[0].mountPropagation"
    assert refused(spec, **flags) == {path}
    assert refused(spec, **flags, podspec_volumes_mount_propagation=ENABLED) == set()
    spec["containers"][0]["volumeMounts"][0]["mountPropagation"] = "Bidirectional"
    assert refused(spec, **flags, podspec_volumes_mount_propagation=ENABLED) == {path}


# --- TestPodSpecFeatureValidation: each flagged field, off and on ----------------------------------------------------

FEATURE_FIELDS = [
    ("Affinity", "affinity", {"nodeAffinity": {}}, "podspec_affinity"),
    ("TopologySpreadConstraints", "topologySpreadConstraints", [{"maxSkew": 1}], "podspec_topologyspreadconstraints"),
    ("DNSPolicy", "dnsPolicy", "ClusterFirstWithHostNet", "podspec_dnspolicy"),
    ("DNSConfig", "dnsConfig", {"nameservers": ["1.2.3.4"]}, "podspec_dnsconfig"),
    ("HostAliases", "hostAliases", [{"ip": "127.0.0.1", "hostnames": ["foo"]}], "podspec_hostaliases"),
    ("NodeSelector", "nodeSelector", {"foo": "bar"}, "podspec_nodeselector"),
    ("Tolerations", "tolerations", [{"key": "key", "operator": "Equal"}], "podspec_tolerations"),
    ("RuntimeClassName", "runtimeClassName", "foo", "podspec_runtimeclassname"),
    ("PodSpecSecurityContext", "securityContext", {"runAsUser": 1}, "podspec_securitycontext"),
    ("PriorityClassName", "priorityClassName", "foo", "podspec_priorityclassname"),
    ("SchedulerName", "schedulerName", "foo", "podspec_schedulername"),
    ("ShareProcessNamespace", "shareProcessNamespace", True, "podspec_shareprocessnamespace"),
]


@pytest.mark.parametrize(("case", "field", "value", "flag"), FEATURE_FIELDS, ids=[f[0] for f in FEATURE_FIELDS])
def test_flagged_pod_fields(case: str, field: str, value: Any, flag: str) -> None:
    # TestPodSpecFeatureValidation: "flag disabled: X present" is refused; "flag enabled: X present" and "... not
    # present" are not
    spec = {"containers": [BUSYBOX], field: value}
    assert refused(spec) == {field}, case
    assert refused({"containers": [BUSYBOX]}) == set()
    assert refused(spec, **{flag: ENABLED}) == set(), case
    assert refused(spec, **{flag: "Allowed"}) == set(), case  # PodSpecMask lets a field through unless Disabled


def test_init_containers_need_enabled_not_just_allowed() -> None:
    # validateInitContainers: "pod spec support for init-containers is off" unless Enabled (PodSpecMask passes Allowed)
    spec = {"initContainers": [{"name": "init", **BUSYBOX}], "containers": [BUSYBOX]}
    assert refused(spec) == {"initContainers"}
    assert refused(spec, podspec_init_containers="Allowed") == {"initContainers"}
    assert refused(spec, podspec_init_containers=ENABLED) == set()


def test_pod_security_context_under_secure_pod_defaults() -> None:
    # PodSecurityContextMask (fieldmask.go): with secure-pod-defaults on, a pod securityContext may carry a plain
    # seccompProfile; TestPodSpecSecurityContext_FeatureEnabled_AllowsPodSecurityContext: with the flag, all of it
    seccomp = {"containers": [BUSYBOX], "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}
    assert refused(seccomp) == {"securityContext"}
    assert refused(seccomp, secure_pod_defaults=ALLOW_ROOT_BOUNDED) == set()
    user = {"containers": [BUSYBOX], "securityContext": {"runAsUser": 1, "seLinuxOptions": {"level": "s0"}}}
    assert refused(user, secure_pod_defaults=ENABLED) == {"securityContext.runAsUser", "securityContext.seLinuxOptions"}
    assert refused(user, podspec_securitycontext=ENABLED) == {"securityContext.seLinuxOptions"}


def test_pod_security_context_bounds() -> None:  # TestPodSpecSecurityContextValidation (too large / negative ids)
    sc = {"runAsUser": -1, "runAsGroup": 2**31, "fsGroup": -1, "supplementalGroups": [1, -1]}
    want = {f"securityContext.{f}" for f in ("runAsUser", "runAsGroup", "fsGroup", "supplementalGroups[1]")}
    assert refused({"containers": [BUSYBOX], "securityContext": sc}, podspec_securitycontext=ENABLED) == want


# --- TestPodSpecFieldRefValidation ---------------------------------------------------------------------------------


def test_env_field_ref() -> None:
    # TestPodSpecFieldRefValidation: fieldRef / resourceFieldRef need kubernetes.podspec-fieldref
    env = [
        {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    assert one({"env": env}) == {
        "containers[0].env[0].valueFrom.fieldRef",
        "containers[0].env[1].valueFrom.resourceFieldRef",
    }
    assert one({"env": env}, podspec_fieldref=ENABLED) == set()


# --- TestUserContainerValidation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "ports", "want"),
    [
        ("has valid unnamed user port", [{"containerPort": 8181}], set()),
        ("has valid user port http1", [{"name": "http1"}], set()),
        ("has valid user port h2c", [{"name": "h2c"}], set()),
        ("has more than one ports with valid names", [{"name": "h2c"}, {"name": "http1"}], {"containers[*].ports"}),
        ("has an empty port set", [{}], set()),
        ("has more than one unnamed port", [{"containerPort": 8080}, {"containerPort": 8181}], {"containers[*].ports"}),
        ("has tcp protocol", [{"protocol": "TCP"}], set()),
        ("has invalid protocol", [{"protocol": "tdp"}], {"containers[0].ports[0].protocol"}),
        ("has host port", [{"hostPort": 80}], {"containers[0].ports[0].hostPort"}),
        ("has invalid port name", [{"name": "foobar"}], {"containers[0].ports[0].name"}),
        ("has container port value too large", [{"containerPort": 65536}], {"containers[0].ports[0].containerPort"}),
        ("has host ip", [{"hostIP": "127.0.0.1"}], {"containers[0].ports[0].hostIP"}),
        ("port conflicts with profiling port", [{"containerPort": 8008}], {"containers[0].ports[0].containerPort"}),
        ("port conflicts with queue proxy", [{"containerPort": 8013}], {"containers[0].ports[0].containerPort"}),
        ("port conflicts with queue proxy (8012)", [{"containerPort": 8012}], {"containers[0].ports[0].containerPort"}),
        (
            "port conflicts with queue proxy metrics",
            [{"containerPort": 9090}],
            {"containers[0].ports[0].containerPort"},
        ),
        (
            "port conflicts with user queue proxy metrics",
            [{"containerPort": 9091}],
            {"containers[0].ports[0].containerPort"},
        ),
        ("port conflicts with queue proxy admin", [{"containerPort": 8022}], {"containers[0].ports[0].containerPort"}),
    ],
)
def test_user_container_ports(case: str, ports: list[dict[str, Any]], want: set[str]) -> None:
    # TestUserContainerValidation and getCommonContainerValidationTestCases, the port cases
    assert one({"ports": ports}) == want, case


def test_user_container_probes() -> None:
    # TestUserContainerValidation "valid with probes (no port)", "invalid with no handler", "invalid with multiple
    # handlers", "valid readiness http probe with port", "invalid liveness tcp probe (has port)"
    readiness = {"periodSeconds": 1, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    ok = {"readinessProbe": {**readiness, "httpGet": {"path": "/"}}, "livenessProbe": {"tcpSocket": {}}}
    assert one(ok) == set()
    assert one({**ok, "livenessProbe": {}}) == {"containers[0].livenessProbe"}
    several = {**readiness, "httpGet": {"path": "/"}, "exec": {}, "tcpSocket": {}}
    assert one({"readinessProbe": several}) == {"containers[0].readinessProbe"}
    assert one({"readinessProbe": {"successThreshold": 1, "httpGet": {"port": "http"}}}) == set()
    assert one({"livenessProbe": {"tcpSocket": {"port": "imap"}}}) == {"containers[0].livenessProbe.tcpSocket.port"}
    # "valid liveness/readiness ... probe with a different container port": a numbered port is not checked
    assert one({"livenessProbe": {"httpGet": {"path": "/", "port": 5000}}}) == set()


def test_readiness_probe_thresholds() -> None:
    # TestUserContainerValidation "invalid readiness probe (has failureThreshold / timeoutSeconds while using special
    # probe)" and "out of bounds probe values"
    special = {"periodSeconds": 0, "successThreshold": 1, "httpGet": {"path": "/"}}
    path = "containers[0].readinessProbe"
    assert one({"readinessProbe": {**special, "failureThreshold": 2}}) == {f"{path}.failureThreshold"}
    assert one({"readinessProbe": {**special, "timeoutSeconds": 2}}) == {f"{path}.timeoutSeconds"}
    bounds = {"periodSeconds": -1, "timeoutSeconds": 0, "successThreshold": 0, "failureThreshold": 0}
    # Knative's test calls the validator directly and sees five; on admission the defaults (revision_defaults.go
    # applyReadinessProbeDefaults) first set successThreshold 1 and, the period being non-zero, failureThreshold 3
    # and timeoutSeconds 1: two remain
    want = {f"{path}.periodSeconds", f"{path}.initialDelaySeconds"}
    assert one({"readinessProbe": {**bounds, "initialDelaySeconds": -1, "httpGet": {}}}) == want


def test_reserved_env() -> None:
    # TestUserContainerValidation "reserved env var name for serving container"; sidecars may set PORT
    # (reservedSidecarEnvVars)
    assert one({"env": [{"name": "PORT", "value": "Foo"}], "ports": [{"containerPort": 8888}]}) == {
        "containers[0].env[0].name"
    }
    spec = {
        "containers": [
            {**BUSYBOX, "ports": [{"containerPort": 8888}]},
            {**BUSYBOX, "name": "side", "env": [{"name": "PORT", "value": "1"}, {"name": "K_SERVICE", "value": "x"}]},
        ]
    }
    assert refused(spec) == {"containers[1].env[1].name"}


def test_reserved_container_name() -> None:  # k8s_validation.go reservedContainerNames
    assert one({"name": "queue-proxy"}) == {"containers[0].name"}


def test_volume_mounts() -> None:
    # getCommonContainerValidationTestCases "has known volumeMounts", "... but at reserved path", "... bad
    # mountPath", "Empty dir has rw access", "has known volumeMount twice"
    mount = {"mountPath": "/mount/path", "name": "the-name", "readOnly": True}
    assert one({"volumeMounts": [mount]}, [CONFIGMAP]) == set()
    assert one({"volumeMounts": [{**mount, "mountPath": "//dev//"}]}, [CONFIGMAP]) == {
        "containers[0].volumeMounts[0].mountPath"
    }
    assert one({"volumeMounts": [{**mount, "mountPath": "not/absolute"}]}, [CONFIGMAP]) == {
        "containers[0].volumeMounts[0].mountPath"
    }
    empty_dir = {"name": "the-name", "emptyDir": {"medium": "Memory"}}
    assert one({"volumeMounts": [{"mountPath": "/mount/path", "name": "the-name"}]}, [empty_dir]) == set()
    twice = [mount, {**mount, "mountPath": "/another/mount/path"}]
    assert one({"volumeMounts": twice}, [CONFIGMAP]) == set()


def test_unknown_volume_mount() -> None:
    # getCommonContainerValidationTestCases "has unknown volumeMounts": no matching volume, and no mountPath (the
    # readOnly complaint of Knative's test goes: admission defaults a container's such mounts to readOnly)
    assert one({"volumeMounts": [{"name": "the-name", "subPath": "oops"}]}) == {
        "containers[0].volumeMounts[0].name",
        "containers[0].volumeMounts[0].mountPath",
    }


def test_container_security_context() -> None:
    # getCommonContainerValidationTestCases "not allowed to add a security context capability", "allowed ... when
    # gate is enabled", "disallowed security context field", "allowed setting ... Privileged to false", "too large
    # uid", "negative uid"
    assert one({"securityContext": {"capabilities": {"add": ["all"]}}}) == {
        "containers[0].securityContext.capabilities.add"
    }
    assert one({"securityContext": {"capabilities": {"add": ["all"]}}}, containerspec_addcapabilities=ENABLED) == set()
    assert one({"securityContext": {"privileged": True}}) == {"containers[0].securityContext.privileged"}
    assert one({"securityContext": {"privileged": False}}) == set()
    assert one({"securityContext": {"runAsUser": 2**31}}) == {"containers[0].securityContext.runAsUser"}
    assert one({"securityContext": {"runAsUser": -1}}) == {"containers[0].securityContext.runAsUser"}


def test_env_from_and_termination_policy() -> None:
    # getCommonContainerValidationTestCases "envFrom - None of", "envFrom - Multiple", "envFrom - Secret",
    # "termination message policy"
    assert one({"envFrom": [{}]}) == {"containers[0].envFrom[0]"}
    both = {"configMapRef": {"name": "c"}, "secretRef": {"name": "s"}}
    assert one({"envFrom": [both]}) == {"containers[0].envFrom[0]"}
    assert one({"envFrom": [{"secretRef": {"name": "s"}}]}) == set()
    assert one({"terminationMessagePolicy": "Not a Policy"}) == {"containers[0].terminationMessagePolicy"}


def test_missing_image() -> None:  # getCommonContainerValidationTestCases "has numerous problems" (no image)
    assert refused({"containers": [{"name": "x"}]}) == {"containers[0].image"}


# --- TestSidecarContainerValidation / TestInitContainerValidation --------------------------------------------------


def test_sidecar_probes_need_multi_container_probing() -> None:
    # TestSidecarContainerValidation "probes not allowed" / "valid with startup probe and multi container probing"
    sidecar = {
        "name": "side",
        **BUSYBOX,
        "readinessProbe": {"periodSeconds": 1, "httpGet": {"path": "/", "port": 8080}},
        "livenessProbe": {"tcpSocket": {"port": 8080}},
        "startupProbe": {"httpGet": {"path": "/"}},
    }
    spec = {"containers": [{**BUSYBOX, "ports": [{"containerPort": 8080}]}, sidecar]}
    assert refused(spec) == {"containers[1].readinessProbe", "containers[1].livenessProbe"}
    assert refused(spec, multi_container_probing=ENABLED) == set()
    # "invalid probes (no port defined)": with probing on, a sidecar's probe names its port
    sidecar["livenessProbe"] = {"tcpSocket": {}}
    assert refused(spec, multi_container_probing=ENABLED) == {"containers[1].livenessProbe.tcpSocket.port"}


def test_init_container_fields() -> None:
    # TestInitContainerValidation "has a lifecycle", "invalid liveness tcp probe (has port)", "disallowed container
    # fields" (stdin, stdinOnce, tty, lifecycle, volumeDevices)
    init = {
        "name": "fail",
        **BUSYBOX,
        "stdin": True,
        "stdinOnce": True,
        "tty": True,
        "lifecycle": {},
        "volumeDevices": [{"name": "disallowed", "devicePath": "/"}],
        "livenessProbe": {"tcpSocket": {"port": "http"}},
    }
    spec = {"initContainers": [init], "containers": [BUSYBOX]}
    want = {
        f"initContainers[0].{f}" for f in ("stdin", "stdinOnce", "tty", "lifecycle", "volumeDevices", "livenessProbe")
    }
    assert refused(spec, podspec_init_containers=ENABLED) == want


# --- TestVolumeValidation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "source", "flag"),
    [
        ("hostPath volume with feature disabled", {"hostPath": {"path": "/tmp"}}, "podspec_volumes_hostpath"),
        ("CSI volume with feature disabled", {"csi": {"driver": "d"}}, "podspec_volumes_csi"),
        (
            "valid PVC with PVC feature disabled",
            {"persistentVolumeClaim": {"claimName": "c", "readOnly": True}},
            "podspec_persistent_volume_claim",
        ),
        ("image volume with feature disabled", {"image": {"reference": "r"}}, "podspec_volumes_image"),
        ("emptyDir volume (disabled)", {"emptyDir": {}}, "podspec_volumes_emptydir"),
    ],
)
def test_flagged_volume_types(case: str, source: dict[str, Any], flag: str) -> None:
    # TestVolumeValidation "X volume with feature disabled" / "valid X volume with feature enabled"
    volume = {"name": "v", **source}
    spec = {
        "containers": [{**BUSYBOX, "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}]}],
        "volumes": [volume],
    }
    kind = next(iter(source))
    assert refused(spec, **{flag: "Disabled"}) == {f"volumes[0].{kind}"}, case
    assert refused(spec, **{flag: ENABLED}) == set(), case


def test_volume_sources() -> None:
    # TestVolumeValidation "just name" / "no volume source", "multiple volume source", "invalid emptyDir volume"
    mounted = {**BUSYBOX, "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}]}
    assert refused({"containers": [mounted], "volumes": [{"name": "v"}]}) == {"volumes[0]"}
    both = {"name": "v", "secret": {"secretName": "s"}, "configMap": {"name": "c"}}
    assert refused({"containers": [mounted], "volumes": [both]}) == {"volumes[0]"}
    assert refused({"containers": [mounted], "volumes": [{"name": "v", "emptyDir": {"medium": "Disk"}}]}) == {
        "volumes[0].emptyDir.medium"
    }
    # a type the Knative Service CRD's schema does not list reaches the webhook without its source
    assert refused({"containers": [mounted], "volumes": [{"name": "v", "nfs": {"server": "s"}}]}) == {"volumes[0]"}


def test_volume_names() -> None:  # TestVolumeValidation "bad name"
    mounted = {**BUSYBOX, "volumeMounts": [{"name": "@@@", "mountPath": "/v", "readOnly": True}]}
    assert refused({"containers": [mounted], "volumes": [{"name": "@@@", "secret": {"secretName": "s"}}]}) == {
        "volumes[0].name"
    }
