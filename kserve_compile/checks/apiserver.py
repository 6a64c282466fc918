"""What the Kubernetes API server rejects that a schema does not express: run on every input and passed-through
object by ``render``, ``validate``, ``diff`` and ``fn`` alike.

- object names (RFC 1123 subdomain, at most 253; RFC 1123 label, at most 63, for the kinds that need one) and
  namespaces (a label);
- label keys and values, annotation keys (qualified names, ``prefix/name``) and the annotations' total size;
- resource quantities in ``resources.requests`` / ``resources.limits`` (syntax, not negative, request ≤ limit);
- enums: a container's ``imagePullPolicy``, a container port's ``protocol``.

Mirrors ``k8s.io/apimachinery/pkg/api/validation`` (``ValidateObjectMeta``, ``NameIsDNSSubdomain``),
``pkg/util/validation`` (``IsQualifiedName``, ``IsValidLabelValue``, ``IsDNS1123Label``) and
``k8s.io/kubernetes/pkg/apis/core/validation`` (``ValidateResourceRequirements``, ``validatePullPolicy``,
``validateContainerPorts``); the messages are written after theirs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from ..errors import Problem
from ..inputs.parse import Document
from ..kube.quantity import QUANTITY_FORMAT_ERROR, parse_quantity

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
MAX_ANNOTATIONS_BYTES = 256 * 1024

# Kinds whose names must be an RFC 1123 label (at most 63) rather than a subdomain.
DNS_LABEL_KINDS = frozenset({"Namespace", "Service", "InferenceService", "InferenceGraph"})

# (key, where it applies) → the values the API server accepts.
ENUMS: dict[str, tuple[str, ...]] = {
    "imagePullPolicy": ("Always", "IfNotPresent", "Never"),
    "protocol": ("SCTP", "TCP", "UDP"),
}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name')"
)
_QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
)


def check_documents(docs: Sequence[Document]) -> list[Problem]:
    """Every problem of every document, located in its file."""
    return [doc.problem(message, path) for doc in docs for path, message in check_object(doc.data)]


def check_object(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(field path, message) for each thing the API server would reject."""
    out = list(_object_meta(obj))
    out += _walk(obj, "")
    return out


def dns_subdomain_error(value: str) -> str | None:
    if len(value) > 253:
        return "must be no more than 253 characters"
    return None if _DNS_SUBDOMAIN.match(value) else _SUBDOMAIN_MSG


def dns_label_error(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    return None if _DNS_LABEL.match(value) else _LABEL_MSG


def qualified_name_error(key: str) -> str | None:
    """``[prefix/]name``: prefix an RFC 1123 subdomain, name at most 63 of ``[-A-Za-z0-9_.]``."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "prefix part must be non-empty"
    if slash and (problem := dns_subdomain_error(prefix)):
        return f"prefix part {problem}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    return None if _QUALIFIED_NAME.match(name) else _QUALIFIED_MSG


def label_value_error(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    return None if _LABEL_VALUE.match(value) else _VALUE_MSG


def _object_meta(obj: dict[str, Any]) -> Iterator[tuple[str, str]]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    name, namespace = meta.get("name"), meta.get("namespace")
    if isinstance(name, str) and name:
        check = dns_label_error if obj.get("kind") in DNS_LABEL_KINDS else dns_subdomain_error
        if problem := check(name):
            yield "metadata.name", f"invalid value {name!r}: {problem}"
    if isinstance(namespace, str) and namespace and (problem := dns_label_error(namespace)):
        yield "metadata.namespace", f"invalid value {namespace!r}: {problem}"


def _meta_maps(meta: dict[str, Any], path: str) -> Iterator[tuple[str, str]]:
    labels, annotations = meta.get("labels"), meta.get("annotations")
    if isinstance(labels, dict):
        for key, value in labels.items():
            if problem := qualified_name_error(str(key)):
                yield f"{path}.labels", f"invalid label key {key!r}: {problem}"
            if isinstance(value, str) and (problem := label_value_error(value)):
                yield f"{path}.labels[{key}]", f"invalid label value {_short(value)}: {problem}"
    if isinstance(annotations, dict):
        size = 0
        for key, value in annotations.items():
            size += len(str(key)) + len(str(value))
            if problem := qualified_name_error(str(key).lower()):
                yield f"{path}.annotations", f"invalid annotation key {key!r}: {problem}"
        if size > MAX_ANNOTATIONS_BYTES:
            yield (
                f"{path}.annotations",
                f"annotations are {size} bytes: must have at most {MAX_ANNOTATIONS_BYTES} bytes",
            )


def _walk(node: Any, path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}" if path else str(key)
            if key == "metadata" and isinstance(value, dict):
                out += _meta_maps(value, sub)
            elif key == "resources" and isinstance(value, dict):
                out += _resources(value, sub)
            elif key == "imagePullPolicy":
                out += _enum(key, value, sub)
            elif key == "ports" and isinstance(value, list):
                out += [
                    p
                    for i, port in enumerate(value)
                    if isinstance(port, dict) and "containerPort" in port
                    for p in _enum("protocol", port.get("protocol"), f"{sub}[{i}].protocol")
                ]
            out += _walk(value, sub)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            out += _walk(item, f"{path}[{i}]")
    return out


def _enum(key: str, value: Any, path: str) -> list[tuple[str, str]]:
    allowed = ENUMS[key]
    if value is None or value in allowed:
        return []
    from ..errors import enum_message

    return [(path, enum_message(value, allowed))]


def _resources(resources: dict[str, Any], path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    parsed: dict[str, dict[str, Decimal]] = {}
    for section in ("requests", "limits"):
        values = resources.get(section)
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            where = f"{path}.{section}[{name}]" if "/" in str(name) or "." in str(name) else f"{path}.{section}.{name}"
            try:
                amount = parse_quantity(value)
            except (ValueError, TypeError):
                out.append((where, f"invalid value {value!r}: {QUANTITY_FORMAT_ERROR}"))
                continue
            if amount < 0:
                out.append((where, f"invalid value {value!r}: must be greater than or equal to 0"))
            parsed.setdefault(section, {})[str(name)] = amount
    for name, request in parsed.get("requests", {}).items():
        limit = parsed.get("limits", {}).get(name)
        if limit is not None and request > limit and request >= 0 <= limit:
            out.append(
                (
                    f"{path}.requests.{name}",
                    f"invalid value {str(resources['requests'][name])!r}: must be less than or equal to {name} limit of {resources['limits'][name]}",
                )
            )
    return out


def _short(value: str) -> str:
    return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
