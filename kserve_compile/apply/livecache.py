"""The daemon's view of live children, so that a resync with nothing changed sends no request.

As controller-runtime's cached client and Flux's inventory do, the apply loop reads members and ApplySet
parents from informer caches (watched by the ApplySet labels) instead of a GET and a LIST per GroupKind;
with ``ownwrites.AppliedRecord`` it also skips the dry run of an object verified unchanged. Anything else — a new
desired form, a field another writer changed, a kind the cluster does not serve — goes the long way
(dry run, then apply only if it drifted). The caches are written only by their informers.
"""

from __future__ import annotations

import threading

from kserve_compile import constants as C
from kserve_compile.apply.informer import InformerGroup
from kserve_compile.apply.objects import Obj, ObjKey, key_of


class LiveCache:
    """Informer-backed members per ApplySet id, and ApplySet parents; ``None`` answers mean "not cached: ask"."""

    def __init__(self) -> None:
        self.members_by_set: dict[str, dict[ObjKey, Obj]] = {}
        self.kinds: set[str] = set()  # GroupKinds with a synced informer
        self.parents: InformerGroup | None = None
        self._lock = threading.Lock()

    def on_child(self, event: str, obj: Obj) -> None:
        set_id = ((obj.get("metadata") or {}).get("labels") or {}).get(C.LABEL_APPLYSET_PART_OF)
        if not set_id:
            return
        key = key_of(obj)
        with self._lock:
            members = self.members_by_set.setdefault(set_id, {})
            if event == "DELETED":
                members.pop(key, None)
                if not members:
                    del self.members_by_set[set_id]
            else:
                members[key] = obj

    def members(self, set_id: str, group_kind: str) -> dict[ObjKey, Obj] | None:
        """Members of one GroupKind (every namespace), or None when that kind is not cached."""
        with self._lock:
            if group_kind not in self.kinds:
                return None
            return {k: o for k, o in self.members_by_set.get(set_id, {}).items() if k.group_kind == group_kind}

    def covers(self, group_kind: str) -> bool:
        with self._lock:
            return group_kind in self.kinds

    def parent(self, namespace: str, name: str) -> Obj | None:
        """The cached parent ConfigMap; None when it is not cached (the caller GETs: a ConfigMap of that name
        without the ApplySet label is invisible here and must still be refused)."""
        if self.parents is None or not self.parents.synced():
            return None
        return self.parents.get((namespace, name))
