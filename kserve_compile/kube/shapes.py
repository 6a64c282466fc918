"""The shape of the Kubernetes core fields an InferenceService inlines (PodSpec, Container), as a table.

kserve-compile keeps these sub-objects as plain data rather than re-modelling them, but it reads some of them
(ports, env, args, resources, volumes …) and the API server would reject a wrong type. This table is the type of
every PodSpec and Container field; ``check`` walks a value against it and names the first field that does not fit.
"""

from __future__ import annotations

from typing import Any

# A shape is: a Python type (or tuple of types), ("list", shape), ("map", shape) for string-keyed maps of one shape,
# or a dict of field → shape for an object whose other fields are free-form.
STR, INT, BOOL = str, int, bool
QUANTITY = (str, int, float)
OBJ: dict[str, Any] = {}  # any object
STR_LIST = ("list", STR)
STR_MAP = ("map", STR)

ENV_VAR = {"name": STR, "value": STR, "valueFrom": OBJ}
CONTAINER_PORT = {"containerPort": INT, "name": STR, "protocol": STR, "hostPort": INT, "hostIP": STR}
VOLUME_MOUNT = {
    "name": STR,
    "mountPath": STR,
    "subPath": STR,
    "readOnly": BOOL,
    "subPathExpr": STR,
    "mountPropagation": STR,
}
RESOURCES = {"limits": ("map", QUANTITY), "requests": ("map", QUANTITY), "claims": ("list", OBJ)}
PROBE = {
    "initialDelaySeconds": INT,
    "timeoutSeconds": INT,
    "periodSeconds": INT,
    "successThreshold": INT,
    "failureThreshold": INT,
    "terminationGracePeriodSeconds": INT,
    "httpGet": OBJ,
    "tcpSocket": OBJ,
    "exec": OBJ,
    "grpc": OBJ,
}

CONTAINER: dict[str, Any] = {
    "name": STR,
    "image": STR,
    "args": STR_LIST,
    "command": STR_LIST,
    "env": ("list", ENV_VAR),
    "envFrom": ("list", OBJ),
    "ports": ("list", CONTAINER_PORT),
    "resources": RESOURCES,
    "volumeMounts": ("list", VOLUME_MOUNT),
    "volumeDevices": ("list", OBJ),
    "readinessProbe": PROBE,
    "livenessProbe": PROBE,
    "startupProbe": PROBE,
    "securityContext": OBJ,
    "imagePullPolicy": STR,
    "workingDir": STR,
    "terminationMessagePath": STR,
    "terminationMessagePolicy": STR,
    "lifecycle": OBJ,
    "stdin": BOOL,
    "stdinOnce": BOOL,
    "tty": BOOL,
    "resizePolicy": ("list", OBJ),
    "restartPolicy": STR,
}
POD_SPEC: dict[str, Any] = {
    "containers": ("list", CONTAINER),
    "initContainers": ("list", CONTAINER),
    "ephemeralContainers": ("list", OBJ),
    "volumes": ("list", {"name": STR}),
    "imagePullSecrets": ("list", {"name": STR}),
    "nodeSelector": STR_MAP,
    "tolerations": ("list", OBJ),
    "affinity": OBJ,
    "serviceAccountName": STR,
    "serviceAccount": STR,
    "automountServiceAccountToken": BOOL,
    "schedulerName": STR,
    "hostIPC": BOOL,
    "hostNetwork": BOOL,
    "hostPID": BOOL,
    "hostUsers": BOOL,
    "securityContext": OBJ,
    "dnsPolicy": STR,
    "dnsConfig": OBJ,
    "restartPolicy": STR,
    "terminationGracePeriodSeconds": INT,
    "activeDeadlineSeconds": INT,
    "nodeName": STR,
    "priority": INT,
    "priorityClassName": STR,
    "runtimeClassName": STR,
    "shareProcessNamespace": BOOL,
    "hostname": STR,
    "subdomain": STR,
    "setHostnameAsFQDN": BOOL,
    "enableServiceLinks": BOOL,
    "preemptionPolicy": STR,
    "overhead": ("map", QUANTITY),
    "topologySpreadConstraints": ("list", OBJ),
    "readinessGates": ("list", OBJ),
    "resourceClaims": ("list", {"name": STR}),
    "schedulingGates": ("list", {"name": STR}),
    "hostAliases": ("list", OBJ),
    "os": OBJ,
    "resources": RESOURCES,
}

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", float: "a number"}


def check(value: Any, shape: Any, path: str) -> str | None:
    """``None`` when ``value`` fits ``shape``, else ``"<path>: <what was expected>"``."""
    problem = _mismatch(value, shape)
    return None if problem is None else path + problem


def _mismatch(value: Any, shape: Any) -> str | None:
    # The path is built on the way back up, from a mismatch only: most values fit.
    if isinstance(shape, tuple) and shape and shape[0] in ("list", "map"):
        kind, inner = shape
        if kind == "list":
            if not isinstance(value, list):
                return ": must be a list"
            for i, item in enumerate(value):
                problem = _mismatch(item, inner)
                if problem:
                    return f"[{i}]{problem}"
            return None
        if not isinstance(value, dict):
            return ": must be a map"
        for key, item in value.items():
            problem = _mismatch(item, inner)
            if problem:
                return f"[{key}]{problem}"
        return None
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return ": must be an object"
        for key, inner in shape.items():
            if key in value and value[key] is not None:
                problem = _mismatch(value[key], inner)
                if problem:
                    return f".{key}{problem}"
        return None
    types = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(value, bool) and bool not in types:
        return f": must be {_describe(types)}"
    if not isinstance(value, types):
        return f": must be {_describe(types)}"
    return None


def _describe(types: tuple[type, ...]) -> str:
    if types == QUANTITY:
        return "a quantity (string or number)"
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
