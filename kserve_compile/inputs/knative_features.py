"""Knative Serving's ``config-features`` ConfigMap: the feature flags Knative's webhook checks the pod spec of every
Knative Service against (knative/serving ``pkg/apis/config/features.go``, ``NewFeaturesConfigFromMap``).

An input like the CA-bundle source: the ConfigMap ``config-features`` in ``knative-serving`` among the inputs (or in
the ``--config`` file) is read, not emitted. Without one, Knative's shipped ConfigMap embedded in the package
(``data/knative/config-features.yaml``, the Knative Serving release KServe pins) stands in, as it does on a cluster
where nobody changed it. Values are read as Knative reads them (``asFlag``): ``Enabled``, ``Allowed`` or
``Disabled`` in any case (``secure-pod-defaults``: ``Disabled``, ``AllowRootBounded`` or ``Enabled``); Knative
ignores any other value and any unknown key, keeping its default, so both get a warning here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from .. import embedded
from ..errors import Problem, did_you_mean
from .parse import Document

NAMESPACE = "knative-serving"
NAME = "config-features"
KEY = (NAMESPACE, NAME)  # (namespace, name), as the pass-through split keys the ConfigMaps it reads

ENABLED, ALLOWED, DISABLED, ALLOW_ROOT_BOUNDED = "Enabled", "Allowed", "Disabled", "AllowRootBounded"
SECURE_POD_DEFAULTS = "secure-pod-defaults"
_FLAG_VALUES = (ENABLED, ALLOWED, DISABLED)
_SECURE_POD_DEFAULTS_VALUES = (DISABLED, ALLOW_ROOT_BOUNDED, ENABLED)
_IGNORED_KEYS = frozenset({"_example"})


@dataclass(frozen=True)
class KnativeFeatures:
    """Every flag with its value as Knative holds it (``Enabled``, ``Allowed``, ``Disabled``, ``AllowRootBounded``)."""

    flags: Mapping[str, str]
    source: str  # where the values come from, for messages
    given: bool  # whether the inputs held the ConfigMap

    def value(self, key: str) -> str:
        return self.flags[key]

    def shown(self, key: str) -> str:
        """The value as the shipped file spells it (``"disabled"``), for messages."""
        return self.flags[key].lower()


@cache
def shipped_document() -> dict:
    """Knative's shipped ``config-features`` (``data/knative/config-features.yaml``)."""
    return embedded.documents(embedded.KNATIVE_FEATURES)[0]


def shipped_version() -> str:
    return str(shipped_document()["metadata"]["labels"]["app.kubernetes.io/version"])


@cache
def shipped_features() -> KnativeFeatures:
    data = shipped_document()["data"]
    flags = {key: _parse(key, value) or DISABLED for key, value in data.items()}
    return KnativeFeatures(flags, f"Knative Serving {shipped_version()}'s shipped config-features", given=False)


def is_features_configmap(doc: Document) -> bool:
    return doc.kind == "ConfigMap" and (doc.api_version, doc.namespace, doc.name) == ("v1", NAMESPACE, NAME)


def load_features(docs: Sequence[Document]) -> tuple[KnativeFeatures, list[Problem]]:
    """The run's flags: from the ``config-features`` among ``docs`` over Knative's defaults, else the shipped ones;
    with warnings for what Knative would ignore (an error for data that is no ConfigMap's)."""
    found = [d for d in docs if is_features_configmap(d)]
    if not found:
        return shipped_features(), []
    doc, problems = found[0], []
    for again in found[1:]:
        problems.append(again.problem(f"{NAMESPACE}/{NAME} is given twice (also in {doc.file})", "metadata.name"))
    data = doc.data.get("data")
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        return shipped_features(), [*problems, doc.problem("data must be a mapping of strings", "data")]
    flags = dict(shipped_features().flags)
    for key, raw in data.items():
        where = f"data[{key}]"
        if not isinstance(raw, str):
            problems.append(doc.problem(f"a ConfigMap value must be a string, not {type(raw).__name__}", where))
        elif key in _IGNORED_KEYS:
            continue
        elif key not in flags:
            hint = did_you_mean(str(key), flags)
            problems.append(doc.problem(f"Knative ignores the unknown key {key!r}{hint}", where, "warning"))
        elif (parsed := _parse(key, raw)) is None:
            allowed = ", ".join(v.lower() for v in _values(key))
            problems.append(
                doc.problem(
                    f"Knative ignores the value {raw!r} (not one of {allowed}) and keeps {flags[key].lower()!r}",
                    where,
                    "warning",
                )
            )
        else:
            flags[key] = parsed
    return KnativeFeatures(flags, f"{NAMESPACE}/{NAME} of the inputs ({doc.file})", given=True), problems


def _values(key: str) -> tuple[str, ...]:
    return _SECURE_POD_DEFAULTS_VALUES if key == SECURE_POD_DEFAULTS else _FLAG_VALUES


def _parse(key: str, raw: str) -> str | None:
    """``asFlag`` / ``asSecurePodDefaultsFlag``: a case-insensitive match, else None (Knative keeps the default)."""
    return next((flag for flag in _values(key) if raw.lower() == flag.lower()), None)
