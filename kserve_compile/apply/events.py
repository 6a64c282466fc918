"""Kubernetes Events (core/v1) for objects the daemon could not reconcile, as client-go's EventRecorder writes them.

The same (object uid, reason, message) is reported once per process: a key that keeps failing on retry
does not write an Event per attempt (client-go aggregates such repeats into ``count``; one Event says the
same to ``kubectl describe``). A failure to record an Event is counted and otherwise ignored.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable

from kserve_compile import constants as C
from kserve_compile.apply.kube import ApiError, Kube, Resource
from kserve_compile.apply.objects import Obj

log = logging.getLogger("kserve_compile.daemon")
EVENT_RESOURCE = Resource("", "v1", "Event", "events", True)
WARNING = "Warning"
_MAX_REMEMBERED = 10_000


class EventRecorder:
    def __init__(
        self,
        kube: Kube,
        on_error: Callable[[str], None] = lambda reason: None,
        clock: Callable[[], float] = lambda: dt.datetime.now(dt.UTC).timestamp(),
    ) -> None:
        self.kube, self.on_error, self.clock = kube, on_error, clock
        self._sent: dict[tuple[str, str, str], None] = {}
        self._lock = threading.Lock()

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> bool:
        """Record an Event about ``obj``; False when it was a repeat or could not be written."""
        meta = obj.get("metadata") or {}
        message = message[:1024]
        key = (str(meta.get("uid") or meta.get("name")), reason, message)
        with self._lock:
            if key in self._sent:
                return False
            if len(self._sent) >= _MAX_REMEMBERED:
                self._sent.pop(next(iter(self._sent)))
            self._sent[key] = None
        namespace = meta.get("namespace") or "default"
        now = dt.datetime.fromtimestamp(self.clock(), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta.get('name', 'object')}.{os.urandom(8).hex()}", "namespace": namespace},
            "involvedObject": {
                "apiVersion": obj.get("apiVersion"),
                "kind": obj.get("kind"),
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "count": 1,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": C.FIELD_MANAGER},
            "reportingComponent": C.FIELD_MANAGER,
        }
        try:
            self.kube.request("POST", EVENT_RESOURCE.path(namespace), body=body)
            return True
        except ApiError as err:
            log.warning("cannot record Event %s on %s/%s: %s", reason, namespace, meta.get("name"), err)
            self.on_error(str(err.status))
            return False
