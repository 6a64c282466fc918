"""Which Nodes a LocalModelNodeGroup covers: its PersistentVolume spec's required node affinity.

Mirrors ``CheckNodeAffinity`` (``pkg/controller/v1alpha1/utils/utils.go``), which hands
``pvSpec.nodeAffinity.required`` to Kubernetes' ``MatchNodeSelectorTerms``
(``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``): the terms are ORed, the requirements of one term are
ANDed, a term with no requirements matches nothing, and a PV spec without ``nodeAffinity.required`` matches no node.
A term that does not parse is skipped; its error is raised only when no other term matched, as the lazy-error
selector does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")
_INTEGER = re.compile(r"^[+-]?\d+$")
AFFINITY_PATH = "spec.persistentVolumeSpec.nodeAffinity.required.nodeSelectorTerms"


def node_selector_terms(pv_spec: Mapping[str, Any]) -> list[Any] | None:
    """The required node selector terms, or None when the PV spec has no required node affinity."""
    affinity = pv_spec.get("nodeAffinity")
    required = affinity.get("required") if isinstance(affinity, Mapping) else None
    if not isinstance(required, Mapping):
        return None
    terms = required.get("nodeSelectorTerms")
    return list(terms) if isinstance(terms, list) else []


def matches(pv_spec: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity`` for a node with this name and these labels; ``InputError`` for a bad selector."""
    terms = node_selector_terms(pv_spec)
    if terms is None:
        return False
    errors: list[InputError] = []
    for i, term in enumerate(terms):
        try:
            if _term_matches(term, name, labels, f"{AFFINITY_PATH}[{i}]"):
                return True
        except InputError as exc:
            errors.append(exc)
    if errors:
        raise errors[0]
    return False


def _term_matches(term: Any, name: str, labels: Mapping[str, str], path: str) -> bool:
    if not isinstance(term, Mapping):
        raise InputError("a node selector term must be an object", path)
    expressions = _requirements(term, "matchExpressions", path)
    fields = _requirements(term, "matchFields", path)
    if not expressions and not fields:
        return False
    label_ok = [_label_requirement(r, labels, f"{path}.matchExpressions[{i}]") for i, r in enumerate(expressions)]
    field_ok = [_field_requirement(r, name, f"{path}.matchFields[{i}]") for i, r in enumerate(fields)]
    return all(label_ok) and all(field_ok)


def _requirements(term: Mapping[str, Any], key: str, path: str) -> Sequence[Mapping[str, Any]]:
    value = term.get(key) or []
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise InputError(f"{key} must be a list of requirements", f"{path}.{key}")
    return value


def _values(req: Mapping[str, Any], path: str) -> list[str]:
    values = req.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise InputError("values must be a list of strings", f"{path}.values")
    return values


def _label_requirement(req: Mapping[str, Any], labels: Mapping[str, str], path: str) -> bool:
    """``labels.NewRequirement`` checks, then the match (checked before matching so an error is never hidden)."""
    key, op, values = str(req.get("key", "")), req.get("operator"), _values(req, path)
    if op not in _OPERATORS:
        raise InputError(f'"{op}" is not a valid label selector operator', f"{path}.operator")
    if op in ("In", "NotIn") and not values:
        raise InputError("for 'in', 'notin' operators, values set can't be empty", f"{path}.values")
    if op in ("Exists", "DoesNotExist") and values:
        raise InputError("values set must be empty for exists and does not exist", f"{path}.values")
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise InputError("for 'Gt', 'Lt' operators, exactly one value is required", f"{path}.values")
        if not _INTEGER.match(values[0]):
            raise InputError("for 'Gt', 'Lt' operators, the value must be an integer", f"{path}.values")
    present, value = key in labels, labels.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if not present or not _INTEGER.match(value):
        return False
    return int(value) > int(values[0]) if op == "Gt" else int(value) < int(values[0])


def _field_requirement(req: Mapping[str, Any], name: str, path: str) -> bool:
    """Node fields: only ``metadata.name``, with ``In``/``NotIn`` and exactly one value."""
    key, op, values = req.get("key"), req.get("operator"), _values(req, path)
    if key != "metadata.name":
        raise InputError(f'"{key}" is not a valid node field selector key (only metadata.name)', f"{path}.key")
    if op not in _FIELD_OPERATORS:
        raise InputError(f'"{op}" is not a valid node field selector operator', f"{path}.operator")
    if len(values) != 1:
        raise InputError(
            f'unexpected number of value ({len(values)}) for node field selector operator "{op}"', f"{path}.values"
        )
    return (name == values[0]) == (op == "In")
