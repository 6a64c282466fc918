""""Did you mean": the closest known word to a mistyped field name or enum value, and the mistyped-deploymentMode
warning (KServe's ``GetDeploymentMode`` falls back to the configured default for a value it does not know; we keep
that output and say so)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from . import constants as C
from .errors import Problem
from .mode import SUPPORTED
from .parse import Document

# Every value KServe's deployment-mode resolution recognises (current and legacy names).
KNOWN_DEPLOYMENT_MODES: tuple[str, ...] = (*SUPPORTED, *C.LEGACY_MODES)


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known word nearest to ``word`` (case-insensitive), if one is near enough."""
    choices = list(known)
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` or ``""``."""
    near = closest(word, known)
    return f"; did you mean {near!r}?" if near and near != word else ""


def deployment_mode_warnings(docs: Sequence[Document]) -> list[Problem]:
    """A warning for each InferenceService or InferenceGraph whose deploymentMode annotation KServe does not know."""
    out = []
    for doc in docs:
        if doc.kind not in (C.KIND_ISVC, C.KIND_IG):
            continue
        annotations = (doc.data.get("metadata") or {}).get("annotations") or {}
        value = annotations.get(C.ANN_DEPLOYMENT_MODE) if isinstance(annotations, dict) else None
        if not isinstance(value, str) or value in KNOWN_DEPLOYMENT_MODES:
            continue
        out.append(
            doc.problem(
                f"deploymentMode {value!r} is not one KServe knows ({', '.join(KNOWN_DEPLOYMENT_MODES)}){did_you_mean(value, KNOWN_DEPLOYMENT_MODES)}; "
                "KServe ignores it and uses the config's defaultDeploymentMode, and so does this render",
                f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]",
                severity="warning",
            )
        )
    return out
