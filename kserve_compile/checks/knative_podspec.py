"""What Knative's webhook refuses in a Knative Service's pod spec, under the run's ``config-features``.

Ports ``ValidatePodSpec`` and the checks it calls (knative/serving ``pkg/apis/serving/k8s_validation.go``) with the
field masks they apply (``pkg/apis/serving/fieldmask.go``), at Knative Serving 1.21.1, the release KServe pins. The
defaults Knative's mutating webhook sets first and that change the outcome are read as set, without copying the
Service (``pkg/apis/serving/v1/revision_defaults.go``: a container's mounts of volumes other than emptyDir and PVC
become ``readOnly``; a readiness probe's thresholds). Left out: what the CRD's schema prunes before the webhook sees it
(container fields the schema does not list), the image reference syntax, and the revision-template checks outside
the pod spec (annotations, timeouts, ``containerConcurrency``).

Each :class:`Refusal` names the field of the Knative Service, what Knative refuses, and the ``config-features`` key
that would allow it (``""`` when none does).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..inputs.knative_features import ALLOW_ROOT_BOUNDED, DISABLED, ENABLED, SECURE_POD_DEFAULTS, KnativeFeatures

SPEC = "spec.template.spec"
MAX_ID = 2**31 - 1  # math.MaxInt32: Knative's bounds of a user or group id

# PodSpecMask: the pod-spec fields Knative lets through while their flag is anything but Disabled.
GATED_POD_FIELDS: dict[str, tuple[str, str]] = {
    "affinity": ("kubernetes.podspec-affinity", "affinity"),
    "dnsConfig": ("kubernetes.podspec-dnsconfig", "a DNS config"),
    "dnsPolicy": ("kubernetes.podspec-dnspolicy", "a DNS policy"),
    "hostAliases": ("kubernetes.podspec-hostaliases", "host aliases"),
    "hostIPC": ("kubernetes.podspec-hostipc", "hostIPC"),
    "hostNetwork": ("kubernetes.podspec-hostnetwork", "hostNetwork"),
    "hostPID": ("kubernetes.podspec-hostpid", "hostPID"),
    "initContainers": ("kubernetes.podspec-init-containers", "init containers"),
    "nodeSelector": ("kubernetes.podspec-nodeselector", "a node selector"),
    "priorityClassName": ("kubernetes.podspec-priorityclassname", "a priority class"),
    "runtimeClassName": ("kubernetes.podspec-runtimeclassname", "a runtime class"),
    "schedulerName": ("kubernetes.podspec-schedulername", "a scheduler name"),
    "securityContext": ("kubernetes.podspec-securitycontext", "a pod security context"),
    "shareProcessNamespace": ("kubernetes.podspec-shareprocessnamespace", "shareProcessNamespace"),
    "tolerations": ("kubernetes.podspec-tolerations", "tolerations"),
    "topologySpreadConstraints": ("kubernetes.podspec-topologyspreadconstraints", "topology spread constraints"),
}
# validateVolume: each volume source and the flag that must be Enabled for it (secret, configMap, projected: always).
GATED_VOLUMES: dict[str, str] = {
    "emptyDir": "kubernetes.podspec-volumes-emptydir",
    "persistentVolumeClaim": "kubernetes.podspec-persistent-volume-claim",
    "hostPath": "kubernetes.podspec-volumes-hostpath",
    "csi": "kubernetes.podspec-volumes-csi",
    "image": "kubernetes.podspec-volumes-image",
}
VOLUME_SOURCES = ("secret", "configMap", "projected", *GATED_VOLUMES)  # those the Service CRD's schema keeps
PVC_WRITE = "kubernetes.podspec-persistent-volume-write"
INIT_CONTAINERS = "kubernetes.podspec-init-containers"
MULTI_CONTAINER = "multi-container"
MULTI_CONTAINER_PROBING = "multi-container-probing"
FIELD_REF = "kubernetes.podspec-fieldref"
ADD_CAPABILITIES = "kubernetes.containerspec-addcapabilities"
MOUNT_PROPAGATION = "kubernetes.podspec-volumes-mount-propagation"
POD_SECURITY_CONTEXT = "kubernetes.podspec-securitycontext"

RESERVED_PATHS = frozenset({"/", "/dev", "/dev/log"})
RESERVED_CONTAINER_NAMES = frozenset({"queue-proxy"})
RESERVED_ENV = frozenset({"PORT", "K_SERVICE", "K_CONFIGURATION", "K_REVISION"})
RESERVED_SIDECAR_ENV = RESERVED_ENV - {"PORT"}  # sidecars and init containers may set PORT
# networking.BackendHTTPPort, BackendHTTP2Port, QueueAdminPort, AutoscalingQueueMetricsPort, UserQueueMetricsPort,
# and knative.dev/pkg's observability/runtime ProfilingDefaultPort
RESERVED_PORTS = frozenset({8012, 8013, 8022, 9090, 9091, 8008})
SERVING_PORT_NAMES = frozenset({"", "h2c", "http1"})
# ContainerMask: the container fields Knative lets through (an init container's others are refused; the CRD's schema
# prunes a container's others before the webhook sees them).
CONTAINER_FIELDS = frozenset(
    {
        "name",
        "args",
        "command",
        "env",
        "workingDir",
        "envFrom",
        "image",
        "imagePullPolicy",
        "livenessProbe",
        "ports",
        "readinessProbe",
        "resources",
        "securityContext",
        "startupProbe",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "volumeMounts",
    }
)
CONTAINER_SECURITY_FIELDS = frozenset(
    {
        "capabilities",
        "readOnlyRootFilesystem",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "allowPrivilegeEscalation",
        "seccompProfile",
        "privileged",
    }
)
POD_SECURITY_FIELDS = frozenset(
    {"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "supplementalGroups", "seccompProfile"}
)
PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Refusal:
    path: str  # the field of the Knative Service
    message: str  # what Knative refuses, and why
    flag: str = ""  # the config-features key that allows it ("": none does)
    container: str = ""  # the container it concerns, if any
    volume: str = ""  # the volume it concerns, if any


def is_set(value: Any) -> bool:
    """Whether Go sees the field as set: a present map, list or object (even empty), or a non-zero scalar."""
    return value is not None and value is not False and value != 0 and value != ""


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def pod_spec_refusals(service: Mapping[str, Any], features: KnativeFeatures) -> list[Refusal]:
    """Every refusal of ``ValidatePodSpec`` on the Service's ``spec.template.spec``."""
    spec = _mapping(_mapping(_mapping(service.get("spec")).get("template")).get("spec"))
    if not spec:
        return []
    check = _PodCheck(spec, features)
    return list(check.run())


def _writable_volume(volume: Mapping[str, Any]) -> bool:
    return volume.get("emptyDir") is not None or volume.get("persistentVolumeClaim") is not None


class _PodCheck:
    """One pod spec under one set of flags: each method yields the refusals of one of Knative's checks."""

    def __init__(self, spec: Mapping[str, Any], features: KnativeFeatures) -> None:
        self.spec = spec
        self.features = features
        self.flag = features.value
        self.containers = [c for c in _items(spec.get("containers")) if isinstance(c, dict)]
        self.inits = [c for c in _items(spec.get("initContainers")) if isinstance(c, dict)]
        self.volumes: dict[str, Mapping[str, Any]] = {}
        self.mounts = {id(c): _mounts(c) for c in (*self.inits, *self.containers)}
        self.ports = [p for c in self.containers for p in _items(c.get("ports")) if isinstance(p, dict)]

    def run(self) -> Iterator[Refusal]:
        yield from self.pod_fields()
        yield from self.pod_security_context()
        yield from self.volume_list()
        yield from self.init_containers()
        yield from self.serving_ports()
        yield from self.container_list()
        name = self.spec.get("serviceAccountName")
        if isinstance(name, str) and name and (len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name)):
            yield Refusal(f"{SPEC}.serviceAccountName", f"invalid value {name!r}: not a DNS-1123 subdomain")

    def refused(self, key: str, what: str) -> str:
        return f'Knative refuses {what} while {key} is "{self.features.shown(key)}" (config-features)'

    # --- the pod ------------------------------------------------------------------------------------------------

    def pod_fields(self) -> Iterator[Refusal]:
        """``PodSpecMask`` (the flagged fields, ``automountServiceAccountToken: true``) and ``validateInitContainers``'s
        own flag test (init containers need ``Enabled``, not just ``Allowed``)."""
        for field, value in self.spec.items():  # in the Service's order: a pod spec holds few fields
            gate = GATED_POD_FIELDS.get(field)
            if gate is None or not is_set(value):
                continue
            key, what = gate
            allowed = self.flag(key) != DISABLED
            if field == "securityContext":
                allowed = allowed or self.flag(SECURE_POD_DEFAULTS) != DISABLED
            if field == "initContainers":
                allowed = self.flag(key) == ENABLED
            if not allowed:
                yield Refusal(f"{SPEC}.{field}", self.refused(key, what), key)
        if self.spec.get("automountServiceAccountToken") is True:
            yield Refusal(
                f"{SPEC}.automountServiceAccountToken",
                "Knative refuses automountServiceAccountToken: true (only false may be set)",
            )

    def pod_security_context(self) -> Iterator[Refusal]:
        """``ValidatePodSecurityContext`` with ``PodSecurityContextMask``."""
        sc = self.spec.get("securityContext")
        if not isinstance(sc, dict) or not self._pod_security_allowed():
            return
        full = self.flag(POD_SECURITY_CONTEXT) != DISABLED
        for field, value in sc.items():
            if not is_set(value) or (full and field in POD_SECURITY_FIELDS):
                continue
            if field == "seccompProfile" and self._secure_defaults() and self._plain_seccomp(value):
                continue
            if field in POD_SECURITY_FIELDS:
                message = self.refused(POD_SECURITY_CONTEXT, f"securityContext.{field}")
                yield Refusal(f"{SPEC}.securityContext.{field}", message, POD_SECURITY_CONTEXT)
            else:
                yield Refusal(f"{SPEC}.securityContext.{field}", f"Knative refuses the pod securityContext.{field}")
        for field in ("runAsUser", "runAsGroup", "fsGroup"):
            yield from _id_bound(sc.get(field), f"{SPEC}.securityContext", field)
        for i, gid in enumerate(_items(sc.get("supplementalGroups"))):
            yield from _id_bound(gid, f"{SPEC}.securityContext", f"supplementalGroups[{i}]")

    def _pod_security_allowed(self) -> bool:
        return self.flag(POD_SECURITY_CONTEXT) != DISABLED or self.flag(SECURE_POD_DEFAULTS) != DISABLED

    def _secure_defaults(self) -> bool:
        return self.flag(SECURE_POD_DEFAULTS) in (ENABLED, ALLOW_ROOT_BOUNDED)

    @staticmethod
    def _plain_seccomp(value: Any) -> bool:
        return (
            isinstance(value, dict) and set(value) <= {"type"} and value.get("type") in ("RuntimeDefault", "Unconfined")
        )

    # --- volumes ------------------------------------------------------------------------------------------------

    def volume_list(self) -> Iterator[Refusal]:
        """``ValidateVolumes`` and ``validateVolume``: unique names, each mounted, one source of an allowed type."""
        mounted = {m.get("name") for mounts in self.mounts.values() for m in mounts}
        for i, volume in enumerate(_items(self.spec.get("volumes"))):
            if not isinstance(volume, dict):
                continue
            name = str(volume.get("name") or "")
            at = f"{SPEC}.volumes[{i}]"
            if not _DNS1123_LABEL.match(name) or len(name) > 63:
                yield Refusal(f"{at}.name", f"invalid volume name {name!r}: not a DNS-1123 label", volume=name)
            if name in self.volumes:
                yield Refusal(f"{at}.name", f"duplicate volume name {name!r}", volume=name)
            if name not in mounted:
                yield Refusal(f"{at}.name", f"volume {name!r} is not mounted by any container", volume=name)
            self.volumes[name] = volume
            yield from self.volume_source(volume, at, name)

    def volume_source(self, volume: Mapping[str, Any], at: str, name: str) -> Iterator[Refusal]:
        for source, key in GATED_VOLUMES.items():
            if volume.get(source) is not None and self.flag(key) != ENABLED:
                yield Refusal(f"{at}.{source}", self.refused(key, f"{source} volumes"), key, volume=name)
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.get("readOnly") is not True and self.flag(PVC_WRITE) != ENABLED:
            what = "a persistentVolumeClaim volume that is not readOnly"
            yield Refusal(f"{at}.persistentVolumeClaim.readOnly", self.refused(PVC_WRITE, what), PVC_WRITE, volume=name)
        given = [s for s in VOLUME_SOURCES if volume.get(s) is not None]
        if len(given) > 1:
            yield Refusal(at, f"expected exactly one volume source, got {', '.join(given)}", volume=name)
        elif not given:
            pruned = sorted(k for k in volume if k != "name")
            what = f" ({', '.join(pruned)}: a type the Knative Service CRD's schema drops)" if pruned else ""
            yield Refusal(at, f"expected exactly one volume source of {', '.join(VOLUME_SOURCES)}{what}", volume=name)
        medium = _mapping(volume.get("emptyDir")).get("medium")
        if medium not in (None, "", "Memory"):
            yield Refusal(f"{at}.emptyDir.medium", f"invalid value {medium!r}: only Memory or empty", volume=name)

    # --- containers ---------------------------------------------------------------------------------------------

    def init_containers(self) -> Iterator[Refusal]:
        """``validateInitContainers`` / ``validateInitContainer`` (only once init containers are enabled)."""
        if not self.inits or self.flag(INIT_CONTAINERS) != ENABLED:
            return
        names = {c.get("name") for c in self.containers}
        for i, container in enumerate(self.inits):
            at = f"{SPEC}.initContainers[{i}]"
            name = str(container.get("name") or "")
            if name and name in names:
                yield Refusal(f"{at}.name", f"duplicate container name {name!r}", container=name)
            for field in sorted(set(container) - CONTAINER_FIELDS, key=str):
                if is_set(container[field]):
                    yield Refusal(f"{at}.{field}", "Knative refuses this field in an init container", container=name)
            for field in ("livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(field) is not None:
                    yield Refusal(f"{at}.{field}", "field not allowed in an init container", container=name)
            yield from self.container(container, at, role="init")
            for j, port in enumerate(_items(container.get("ports"))):
                yield from _port_basics(port, f"{at}.ports[{j}]", name)

    def serving_ports(self) -> Iterator[Refusal]:
        """``validateContainersPorts``: one serving port across the containers (none: only with one container)."""
        count = sum(len(_items(c.get("ports"))) for c in self.containers)  # malformed entries count, as in Go
        if count > 1:
            yield Refusal(
                f"{SPEC}.containers[*].ports",
                f"more than one container port is set ({count}): Knative serves a single port across all containers",
            )
        elif count == 0 and len(self.containers) > 1:
            yield Refusal(f"{SPEC}.containers[*].ports", "no container port is set: one container must declare it")

    def container_list(self) -> Iterator[Refusal]:
        """One container (``ValidateUserContainer``), or several (``validateContainers``: multi-container)."""
        if len(self.containers) > 1 and self.flag(MULTI_CONTAINER) != ENABLED:
            message = self.refused(MULTI_CONTAINER, f"{len(self.containers)} containers")
            yield Refusal(f"{SPEC}.containers", message, MULTI_CONTAINER)
            return
        seen: set[str] = set()
        port = self._serving_port()
        several = len(self.containers) > 1
        for i, container in enumerate(self.containers):
            at = f"{SPEC}.containers[{i}]"
            name = str(container.get("name") or "")
            if name and name in seen:  # an unnamed container gets a unique name from Knative's defaults
                yield Refusal(f"{at}.name", f"duplicate container name {name!r}", container=name)
            seen.add(name)
            serving = not several or bool(_items(container.get("ports")))
            if serving:
                yield from _probe(container.get("livenessProbe"), at, "livenessProbe", name, port)
                yield from _readiness(container.get("readinessProbe"), at, "readinessProbe", name, port)
            else:
                yield from self.sidecar_probes(container, at, name)
            yield from self.container(container, at, role="user" if serving else "sidecar")
            for j, entry in enumerate(_items(container.get("ports"))):
                yield from _serving_port_rules(entry, f"{at}.ports[{j}]", name, first=j == 0)

    def _serving_port(self) -> Mapping[str, Any]:
        first = self.ports[0] if self.ports else {}
        return {"name": first.get("name") or "http", "containerPort": first.get("containerPort") or 8080}

    def sidecar_probes(self, container: Mapping[str, Any], at: str, name: str) -> Iterator[Refusal]:
        """``validateSidecarContainer``: a sidecar's probes need multi-container probing."""
        for field in ("livenessProbe", "readinessProbe"):
            probe = container.get(field)
            if probe is None:
                continue
            if self.flag(MULTI_CONTAINER_PROBING) != ENABLED:
                if _mapping(probe):
                    what = f"a {field} on a container without ports"
                    message = self.refused(MULTI_CONTAINER_PROBING, what)
                    yield Refusal(f"{at}.{field}", message, MULTI_CONTAINER_PROBING, container=name)
            elif field == "readinessProbe":
                yield from _readiness(probe, at, field, name, None)
            else:
                yield from _probe(probe, at, field, name, None)

    def container(self, container: Mapping[str, Any], at: str, *, role: str) -> Iterator[Refusal]:
        """``validate``: reserved names and env, envFrom, image, security context, termination policy, mounts."""
        name = str(container.get("name") or "")
        if name in RESERVED_CONTAINER_NAMES:
            yield Refusal(f"{at}.name", f"{name!r} is a reserved container name", container=name)
        reserved = RESERVED_ENV if role == "user" else RESERVED_SIDECAR_ENV
        for i, env in enumerate(_items(container.get("env"))):
            env = _mapping(env)
            if env.get("name") in reserved:
                message = f"{env['name']!r} is a reserved environment variable (Knative sets it)"
                yield Refusal(f"{at}.env[{i}].name", message, container=name)
            source = _mapping(env.get("valueFrom"))
            for ref in ("fieldRef", "resourceFieldRef"):
                if source.get(ref) is not None and self.flag(FIELD_REF) == DISABLED:
                    message = self.refused(FIELD_REF, f"env valueFrom.{ref}")
                    yield Refusal(f"{at}.env[{i}].valueFrom.{ref}", message, FIELD_REF, container=name)
        for i, env_from in enumerate(_items(container.get("envFrom"))):
            refs = [r for r in ("configMapRef", "secretRef") if _mapping(env_from).get(r) is not None]
            if len(refs) != 1:
                yield Refusal(f"{at}.envFrom[{i}]", "expected exactly one of configMapRef, secretRef", container=name)
        if not container.get("image"):
            yield Refusal(f"{at}.image", "missing field: a container needs an image", container=name)
        yield from self.security_context(_mapping(container.get("securityContext")), f"{at}.securityContext", name)
        policy = container.get("terminationMessagePolicy")
        if policy not in (None, "", "File", "FallbackToLogsOnError"):
            yield Refusal(f"{at}.terminationMessagePolicy", f"invalid value {policy!r}", container=name)
        yield from self.volume_mounts(container, at, name, defaulted=role != "init")

    def security_context(self, sc: Mapping[str, Any], at: str, name: str) -> Iterator[Refusal]:
        """``validateSecurityContext`` with ``SecurityContextMask`` and ``CapabilitiesMask``."""
        if not sc:
            return
        for field, value in sc.items():
            if field == "privileged" and value is True:
                yield Refusal(f"{at}.privileged", "Knative refuses privileged: true", container=name)
            elif field not in CONTAINER_SECURITY_FIELDS and is_set(value):
                yield Refusal(f"{at}.{field}", f"Knative refuses securityContext.{field}", container=name)
        added = _mapping(sc.get("capabilities")).get("add")
        if is_set(added) and not self._may_add(added):
            message = self.refused(ADD_CAPABILITIES, "adding capabilities")
            yield Refusal(f"{at}.capabilities.add", message, ADD_CAPABILITIES, container=name)
        for field in ("runAsUser", "runAsGroup"):
            yield from _id_bound(sc.get(field), at, field, name)

    def _may_add(self, added: Any) -> bool:
        if self.flag(ADD_CAPABILITIES) == ENABLED:
            return True
        return self._secure_defaults() and added == ["NET_BIND_SERVICE"]

    def volume_mounts(self, container: Mapping[str, Any], at: str, name: str, *, defaulted: bool) -> Iterator[Refusal]:
        """``validateVolumeMounts``: a volume for each mount, a unique absolute path, read-only where Knative asks
        (``defaulted``: a container's, whose mounts of volumes other than emptyDir and PVC admission makes read-only)."""
        paths: set[str] = set()
        for i, mount in enumerate(self.mounts.get(id(container)) or ()):
            where = f"{at}.volumeMounts[{i}]"
            volume_name = str(mount.get("name") or "")
            volume = self.volumes.get(volume_name)
            if volume is None:
                yield Refusal(f"{where}.name", "volumeMount has no matching volume", container=name)
            path = str(mount.get("mountPath") or "")
            clean = posixpath.normpath(path) if path else ""
            if clean.startswith("//"):
                clean = "/" + clean.lstrip("/")
            if not path:
                yield Refusal(f"{where}.mountPath", "missing field: mountPath", container=name)
            elif clean in RESERVED_PATHS:
                yield Refusal(f"{where}.mountPath", f"mountPath {clean!r} is a reserved path", container=name)
            elif not path.startswith("/"):
                yield Refusal(f"{where}.mountPath", f"invalid value {path!r}: not absolute", container=name)
            elif clean in paths:
                yield Refusal(f"{where}.mountPath", f"mountPath {path!r} must be unique", container=name)
            paths.add(clean)
            yield from self.mount_access(mount, volume or {}, where, name, volume_name, defaulted)

    def mount_access(
        self,
        mount: Mapping[str, Any],
        volume: Mapping[str, Any],
        where: str,
        name: str,
        volume_name: str,
        defaulted: bool,
    ) -> Iterator[Refusal]:
        read_only = mount.get("readOnly") is True or (defaulted and not _writable_volume(volume))
        if not _writable_volume(volume) and not read_only:
            message = f"volume mount of {volume_name!r} should be readOnly for this type of volume"
            yield Refusal(f"{where}.readOnly", message, container=name, volume=volume_name)
        propagation = mount.get("mountPropagation")
        if propagation is not None:
            if self.flag(MOUNT_PROPAGATION) != ENABLED:
                message = self.refused(MOUNT_PROPAGATION, "mountPropagation")
                yield Refusal(f"{where}.mountPropagation", message, MOUNT_PROPAGATION, name, volume_name)
            if propagation not in ("None", "HostToContainer"):
                message = "mount propagation should be set to None or HostToContainer"
                yield Refusal(f"{where}.mountPropagation", message, container=name, volume=volume_name)
        if _mapping(volume.get("persistentVolumeClaim")).get("readOnly") is True and not read_only:
            message = "volume is readOnly but volume mount is not"
            yield Refusal(f"{where}.readOnly", message, container=name, volume=volume_name)


def _mounts(container: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [m for m in _items(container.get("volumeMounts")) if isinstance(m, dict)]


def _id_bound(value: Any, at: str, field: str, container: str = "") -> Iterator[Refusal]:
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_ID:
        yield Refusal(f"{at}.{field}", f"expected 0 <= {value} <= {MAX_ID}", container=container)


def _port_basics(port: Any, at: str, name: str) -> Iterator[Refusal]:
    """``validateContainerPortBasic``: no host port or IP, not a port Knative's queue-proxy holds, in range."""
    port = _mapping(port)
    for field in ("hostIP", "hostPort"):
        if is_set(port.get(field)):
            yield Refusal(f"{at}.{field}", f"Knative refuses {field} on a container port", container=name)
    number = port.get("containerPort")
    if number in RESERVED_PORTS:
        yield Refusal(f"{at}.containerPort", f"{number} is a reserved port (Knative's queue-proxy)", container=name)
    if isinstance(number, int) and not 0 <= number <= 65535:
        yield Refusal(f"{at}.containerPort", f"expected 0 <= {number} <= 65535", container=name)


def _serving_port_rules(port: Any, at: str, name: str, *, first: bool) -> Iterator[Refusal]:
    """``validateContainerPorts``: the first port of a container is the serving port: TCP, named h2c/http1 or not."""
    if not first:
        return
    yield from _port_basics(port, at, name)
    port = _mapping(port)
    if port.get("protocol") not in (None, "", "TCP"):
        yield Refusal(f"{at}.protocol", f"invalid value {port['protocol']!r}: only TCP", container=name)
    if str(port.get("name") or "") not in SERVING_PORT_NAMES:
        message = f"port name {port['name']!r} is not allowed: empty, h2c or http1"
        yield Refusal(f"{at}.name", message, container=name)


def _probe(probe: Any, container_at: str, field: str, name: str, port: Mapping[str, Any] | None) -> Iterator[Refusal]:
    """``validateProbe``: one handler; a user container's named probe port is its serving port's name."""
    if not isinstance(probe, dict):
        return
    at = f"{container_at}.{field}"
    handlers = [h for h in PROBE_HANDLERS if probe.get(h) is not None]
    if len(handlers) != 1:
        found = ", ".join(handlers) if handlers else "none"
        yield Refusal(at, f"expected exactly one of {', '.join(PROBE_HANDLERS)} (found {found})", container=name)
    for handler in ("httpGet", "tcpSocket"):
        target = _mapping(probe.get(handler)).get("port")
        if handler not in probe:
            continue
        if port is not None and isinstance(target, str) and target and target != port["name"]:
            message = f"invalid value {target!r}: probe port must match the container port ({port['name']})"
            yield Refusal(f"{at}.{handler}.port", message, container=name)
        elif port is None and not target:
            yield Refusal(f"{at}.{handler}.port", "probe port must be specified", container=name)


def _readiness(
    probe: Any, container_at: str, field: str, name: str, port: Mapping[str, Any] | None
) -> Iterator[Refusal]:
    """``validateReadinessProbe``: its thresholds (period 0 is Knative's aggressive probing, without timeouts)."""
    if not isinstance(probe, dict):
        return
    yield from _probe(probe, container_at, field, name, port)
    at = f"{container_at}.{field}"
    values = {f: probe.get(f) or 0 for f in _PROBE_BOUNDS}
    # applyReadinessProbeDefaults, which admission runs first
    values["successThreshold"] = values["successThreshold"] or 1
    if values["periodSeconds"]:
        values["failureThreshold"] = values["failureThreshold"] or 3
        values["timeoutSeconds"] = values["timeoutSeconds"] or 1
    for field, low in _PROBE_BOUNDS.items():
        value = values[field]
        if isinstance(value, int) and value < low and field in _ALWAYS_BOUNDED:
            yield Refusal(f"{at}.{field}", f"expected {low} <= {value}", container=name)
    if values["periodSeconds"] == 0:
        for field in ("failureThreshold", "timeoutSeconds"):
            if values[field]:
                yield Refusal(f"{at}.{field}", f"{field} is disallowed when periodSeconds is zero", container=name)
        return
    for field in ("timeoutSeconds", "failureThreshold"):
        if isinstance(values[field], int) and values[field] < 1:
            yield Refusal(f"{at}.{field}", f"expected 1 <= {values[field]}", container=name)


_PROBE_BOUNDS = {
    "periodSeconds": 0,
    "initialDelaySeconds": 0,
    "successThreshold": 1,
    "timeoutSeconds": 1,
    "failureThreshold": 1,
}
_ALWAYS_BOUNDED = ("periodSeconds", "initialDelaySeconds", "successThreshold")
