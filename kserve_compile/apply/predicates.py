"""Which watch events of a reconciled object need a reconcile (controller-runtime's ``pkg/predicate``).

As ``GenerationChangedPredicate`` or ``LabelChangedPredicate`` or ``AnnotationChangedPredicate``: an update passes
only when ``metadata.generation`` (the spec), the labels or the annotations changed, or the object was recreated
under the same name (a new uid). What the daemon itself writes — the status subresource, and with it
``resourceVersion`` and ``managedFields`` — changes none of these, so its own status write never queues its object
again, while a user's label or annotation edit still does. Creations, deletions and relists of an unseen object
always pass.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

from kserve_compile.apply.objects import Obj

__all__ = ["SpecOrMetadataChanged"]


def _fingerprint(obj: Obj) -> tuple[Any, ...]:
    meta = obj.get("metadata") or {}
    return meta.get("generation"), meta.get("labels") or {}, meta.get("annotations") or {}, meta.get("uid")


class SpecOrMetadataChanged:
    """Remembers each object's last fingerprint; ``passes`` says whether an event needs work."""

    def __init__(self) -> None:
        self._seen: dict[Hashable, tuple[Any, ...]] = {}
        self._lock = threading.Lock()

    def passes(self, key: Hashable, event: str, obj: Obj) -> bool:
        with self._lock:
            if event == "DELETED":
                self._seen.pop(key, None)
                return False  # ownerReferences let the garbage collector remove the children
            fingerprint = _fingerprint(obj)
            unchanged = event == "MODIFIED" and self._seen.get(key) == fingerprint
            self._seen[key] = fingerprint
            return not unchanged
