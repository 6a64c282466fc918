"""The apply loop's own errors, and API errors worded for people.

``explain`` turns an :class:`~kserve_compile.apply.kube.ApiError` on one object into the line ``apply``, ``diff
--cluster`` and the daemon print: an immutable field or a server-side apply conflict says what to do about it, as
``kubectl apply --server-side`` does (``k8s.io/kubectl/pkg/cmd/apply/apply.go``: the server's conflict message as
it is, then the ways out).
"""

from __future__ import annotations

from kserve_compile import constants as C
from kserve_compile.apply.kube import UNTYPABLE_PATCH, ApiError
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
    if err.is_conflict and err.causes:  # the server's own words, as kubectl prints them, then what to do
        return (
            f"{key}: {err.message}\nrerun with --force-conflicts to take these fields over, or remove them from the "
            "input to leave them to their manager"
        )
    if err.is_untypable:
        return f"{key}: the API server cannot take this object: {err.message.removeprefix(UNTYPABLE_PATCH + ': ')}"
    if err.status == 0:
        return f"{key}: cannot reach the API server: {err.message}"
    return f"{key}: {err.status} {err.reason}: {err.message}".rstrip(": ")
