"""The apply loop's own errors, and API errors worded for people.

``explain`` turns an :class:`~kserve_compile.apply.kube.ApiError` on one object into the line ``apply``, ``diff
--cluster`` and the daemon print: an immutable field or a server-side apply conflict says what to do about it, as
``kubectl apply --server-side`` does (``k8s.io/kubectl/pkg/cmd/apply/apply.go``, the conflict help text).
"""

from __future__ import annotations

from kserve_compile import constants as C
from kserve_compile.apply.kube import ApiError
from kserve_compile.apply.objects import ObjKey


class ApplySetError(Exception):
    """The ApplySet parent exists but is not ours to change (not a parent, or another tool's)."""


class NotLeader(Exception):
    """Leadership was lost mid-run; the caller must stop writing."""


def explain(key: ObjKey, err: ApiError) -> str:
    """One readable line per failure: immutable fields and ownership conflicts say what to do."""
    if err.is_immutable:
        fields = sorted({str(c.get("field", "")).lstrip(".") for c in err.causes if c.get("field")})
        return (
            f"{key}: {', '.join(fields) or 'a field'} is immutable and the new value differs; rerun with "
            f"--recreate-on-immutable (or annotate {C.ANN_KC_RECREATE}: enabled) to delete and recreate it — "
            "this causes downtime"
        )
    if err.is_conflict and err.causes:
        owners = sorted({f"{str(c.get('field', '')).lstrip('.')} (owned by {_manager_of(c)})" for c in err.causes})
        return f"{key}: conflict: {', '.join(owners)}; rerun with --force-conflicts to take ownership"
    if err.status == 0:
        return f"{key}: cannot reach the API server: {err.message}"
    return f"{key}: {err.status} {err.reason}: {err.message}".rstrip(": ")


def _manager_of(cause: dict[str, object]) -> str:
    """The field manager a conflict cause names: ``conflict with "kubectl": .spec.replicas`` → ``kubectl``."""
    message = str(cause.get("message", ""))
    return message.split('"')[1] if '"' in message else "?"
