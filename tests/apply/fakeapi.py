"""A fake Kubernetes API server for the apply-loop tests (stdlib HTTP on 127.0.0.1, one thread per request).

What it models: discovery for the kinds kserve-compile emits and watches; an object store with uid,
resourceVersion (global counter, bumped only on real change) and generation (bumped on non-metadata,
non-status change); server-side apply with per-manager field ownership (maps recurse, lists and
scalars are owned whole), 409 conflicts unless ``force``, ``dryRun=All`` that never persists,
an immutable Deployment ``spec.selector`` (422), the ``/status`` subresource, LIST with label and
field selectors, DELETE, POST/PUT (Leases, optimistic concurrency), and watches with bookmarks and
410 Gone after :meth:`FakeApi.compact`.

Tests inject faults with :meth:`FakeApi.fail` and read every request from :attr:`FakeApi.log`.

Given ``FakeApi(oracle=...)`` (an :class:`smd.Oracle`), every apply and update merges through
structured-merge-diff instead: keyed lists (containers by name, env by name, ports by
containerPort+protocol), sets, atomic structs, and real ``managedFields`` entries keyed by manager,
operation and subresource — see tests/apply/test_apply_smd.py and docs/apply.md.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import json
import re
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import yaml

if TYPE_CHECKING:
    from smd import Oracle

# (group, version, kind, plural, namespaced, has_status)
RESOURCES = [
    ("", "v1", "ConfigMap", "configmaps", True, False),
    ("", "v1", "Secret", "secrets", True, False),
    ("", "v1", "Service", "services", True, True),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, False),
    ("", "v1", "Namespace", "namespaces", False, True),
    ("", "v1", "Event", "events", True, False),
    ("apps", "v1", "Deployment", "deployments", True, True),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, True),
    ("networking.k8s.io", "v1", "Ingress", "ingresses", True, True),
    ("serving.knative.dev", "v1", "Service", "services", True, True),
    ("networking.istio.io", "v1beta1", "VirtualService", "virtualservices", True, False),
    ("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes", True, True),
    ("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects", True, True),
    ("serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices", True, True),
    ("serving.kserve.io", "v1alpha1", "ServingRuntime", "servingruntimes", True, False),
    ("serving.kserve.io", "v1alpha1", "ClusterServingRuntime", "clusterservingruntimes", False, False),
    ("serving.kserve.io", "v1alpha1", "InferenceGraph", "inferencegraphs", True, True),
    ("serving.kserve.io", "v1alpha1", "ClusterStorageContainer", "clusterstoragecontainers", False, False),
    ("coordination.k8s.io", "v1", "Lease", "leases", True, False),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False, True),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, False),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True, False),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, False),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, False),
    ("serving.kserve.io", "v1alpha2", "LLMInferenceService", "llminferenceservices", True, True),
    ("serving.kserve.io", "v1alpha2", "LLMInferenceServiceConfig", "llminferenceserviceconfigs", True, True),
    ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets", True, True),
    ("inference.networking.k8s.io", "v1", "InferencePool", "inferencepools", True, True),
    ("inference.networking.x-k8s.io", "v1alpha2", "InferencePool", "inferencepools", True, True),
    ("serving.kserve.io", "v1alpha1", "LocalModelCache", "localmodelcaches", False, True),
    ("serving.kserve.io", "v1alpha1", "LocalModelNamespaceCache", "localmodelnamespacecaches", True, True),
    ("serving.kserve.io", "v1alpha1", "LocalModelNodeGroup", "localmodelnodegroups", False, True),
]

_IGNORED_META = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "managedFields",
    "creationTimestamp",
    "selfLink",
    "deletionTimestamp",
}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any

    def __str__(self) -> str:
        q = "&".join(f"{k}={v}" for k, v in sorted(self.query.items()))
        return f"{self.method} {self.path}" + (f"?{q}" if q else "")

    @property
    def is_write(self) -> bool:
        return self.method in ("POST", "PUT", "PATCH", "DELETE") and self.query.get("dryRun") != "All"


@dataclass
class Fault:
    method: str
    path_re: str
    status: int = 500  # 0 = drop the connection without answering
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    dry_run: bool | None = None  # None = match both
    delay: float = 0.0  # with status None: answer normally, but only after this many seconds
    raw: bytes | None = None  # answer with these bytes as the body (e.g. a broken proxy's page)

    def matches(self, req: Request) -> bool:
        if self.times <= 0 or req.method != self.method or not re.search(self.path_re, req.path):
            return False
        return self.dry_run is None or self.dry_run == (req.query.get("dryRun") == "All")


def conflict_message(causes: list[dict[str, Any]]) -> str:
    """kube-apiserver's 409 message for server-side apply conflicts (1.20, checked): one conflict on one line,
    several grouped by manager, one field per line."""
    if len(causes) == 1:
        return f"Apply failed with 1 conflict: {causes[0]['message']}: {causes[0]['field']}"
    by_manager: dict[str, list[str]] = {}
    for c in causes:
        by_manager.setdefault(c["message"].replace("conflict with", "conflicts with", 1), []).append(c["field"])
    groups = "\n".join(f"{who}:" + "".join(f"\n- {f}" for f in fields) for who, fields in by_manager.items())
    return f"Apply failed with {len(causes)} conflicts: {groups}"


def _status_body(code: int, reason: str, message: str, causes: list[dict[str, Any]] | None = None) -> dict:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    if reason:  # kube-apiserver leaves it out of some answers (an untypable apply patch)
        body["reason"] = reason
    body["message"] = message
    if causes:
        body["details"] = {"causes": causes}
    return body


class ApiFailure(Exception):
    def __init__(self, code: int, reason: str, message: str, causes: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.body = _status_body(code, reason, message, causes)
        self.code = code


# --- field ownership (simplified SMD: maps recurse; lists and scalars are atomic leaves) -------
def _leaves(obj: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            out.update(_leaves(v, prefix + (k,)))
    else:
        out[prefix] = obj
    return out


def _owned_paths(body: dict[str, Any], status_only: bool) -> dict[tuple[str, ...], Any]:
    if status_only:
        return {("status",) + p: v for p, v in _leaves(body.get("status") or {}).items() if p}
    out: dict[tuple[str, ...], Any] = {}
    for k, v in body.items():
        if k in ("apiVersion", "kind", "status"):
            continue
        if k == "metadata":
            for mk, mv in (v or {}).items():
                if mk not in _IGNORED_META:
                    out.update(_leaves(mv, ("metadata", mk)))
        else:
            out.update(_leaves(v, (k,)))
    return out


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for p in path:
        if not isinstance(obj, dict) or p not in obj:
            return _MISSING
        obj = obj[p]
    return obj


def _set(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for p in path[:-1]:
        if not isinstance(obj.get(p), dict):
            obj[p] = {}
        obj = obj[p]
    obj[path[-1]] = copy.deepcopy(value)


def _delete(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    parents = []
    for p in path[:-1]:
        if not isinstance(obj.get(p), dict):
            return
        parents.append((obj, p))
        obj = obj[p]
    obj.pop(path[-1], None)
    for parent, key in reversed(parents):  # drop maps this removal emptied
        if parent[key] == {}:
            del parent[key]
        else:
            break


_MISSING = object()


def _fields_v1(paths: set[tuple[str, ...]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted(paths):
        node = out
        for p in path:
            node = node.setdefault(f"f:{p}", {})
    return out


class FakeApi:
    def __init__(self, oracle: Oracle | None = None) -> None:
        self.oracle = oracle  # structured-merge-diff instead of the simplified merge
        self.lock = threading.Condition()
        self.objects: dict[tuple[str, str, str, str], dict[str, Any]] = {}  # (group, plural, ns, name)
        self.owners: dict[tuple[str, str, str, str], dict[str, tuple[str, set[tuple[str, ...]]]]] = {}
        self.rv = itertools.count(100)
        self.current_rv = 99
        self.events: list[tuple[int, tuple[str, str], str, dict[str, Any]]] = []
        self.event_rvs: list[int] = []  # the rvs of ``events``, ascending: watches bisect into it
        self.compacted_rv = 0
        self.watch_epoch = 0
        self.faults: list[Fault] = []
        self.watch_faults: list[tuple[str, str]] = []  # (plural, mode), consumed by open watches
        self.log: list[Request] = []
        self.immutable: dict[str, list[tuple[str, ...]]] = {"Deployment": [("spec", "selector")]}
        self.on_write: list[Callable[[str, dict[str, Any]], None]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.by_plural = {(g, p): (g, v, k, p, n, s) for g, v, k, p, n, s in RESOURCES}

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self) -> str:
        api = self

        class Handler(_Handler):
            fake = api

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        with self.lock:
            self._stopping = True
            self.lock.notify_all()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    # --- test helpers ---------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        path_re: str,
        status: int = 500,
        times: int = 1,
        *,
        reason: str = "",
        message: str = "",
        causes: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        dry_run: bool | None = None,
        raw: bytes | None = None,
    ) -> Fault:
        fault = Fault(
            method,
            path_re,
            status,
            _status_body(status, reason, message, causes),
            headers or {},
            times,
            dry_run,
            raw=raw,
        )
        with self.lock:
            self.faults.append(fault)
        return fault

    def delay(self, method: str, path_re: str, seconds: float, times: int = 1) -> Fault:
        """Do the request at once, but hold its response back ``seconds`` (a slow network or server)."""
        fault = Fault(method, path_re, status=None, times=times, delay=seconds)  # type: ignore[arg-type]
        with self.lock:
            self.faults.append(fault)
        return fault

    def break_watches(self, plural: str, mode: str, times: int = 1) -> None:
        """Make the next ``times`` open watches on ``plural`` fail: ``reset`` (connection torn down mid-stream),
        ``garbage`` (a line that is not JSON), ``close`` (the server ends the stream early), ``error`` (an ERROR
        event with code 500) or ``hang`` (the stream goes silent: no events, no bookmarks)."""
        with self.lock:
            self.watch_faults.extend([(plural, mode)] * times)
            self.lock.notify_all()

    def watch_count(self, plural: str) -> int:
        """How many watch requests on ``plural`` were made so far."""
        with self.lock:
            return sum(1 for r in self.log if r.query.get("watch") == "true" and r.path.endswith("/" + plural))

    def requests_since(self, mark: int, watches: bool = False) -> list[Request]:
        with self.lock:
            return [r for r in self.log[mark:] if watches or r.query.get("watch") != "true"]

    def writes(self) -> list[Request]:
        return [r for r in self.log if r.is_write]

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    def find(self, group: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            obj = self.objects.get((group, plural, namespace, name))
            return copy.deepcopy(obj) if obj else None

    def names(self, group: str, plural: str, namespace: str = "") -> list[str]:
        with self.lock:
            return sorted(
                k[3] for k in self.objects if k[0] == group and k[1] == plural and (not namespace or k[2] == namespace)
            )

    def put(self, obj: dict[str, Any], manager: str = "test-setup") -> dict[str, Any]:
        """Create or replace an object directly (as some other client would), owned by ``manager``."""
        res = self._res_for(obj["apiVersion"], obj["kind"])
        ns = obj["metadata"].get("namespace", "") if res[4] else ""
        with self.lock:
            key = (res[0], res[3], ns, obj["metadata"]["name"])
            if self.oracle is not None:
                return self._oracle_update(key, res, copy.deepcopy(obj), manager)
            return self._commit(key, res, copy.deepcopy(obj), manager, "Update", _owned_paths(obj, False).keys())

    def update(
        self,
        group: str,
        plural: str,
        namespace: str,
        name: str,
        mutate: Callable[[dict[str, Any]], None],
        manager: str = "kubectl-edit",
        subresource: str = "",
    ) -> dict[str, Any]:
        """An Update by another manager: it takes ownership of every leaf it changed."""
        with self.lock:
            key = (group, plural, namespace, name)
            live = self.objects[key]
            new = copy.deepcopy(live)
            mutate(new)
            if self.oracle is not None:
                return self._oracle_update(key, self.by_plural[(group, plural)], new, manager, subresource)
            before = _owned_paths(live, subresource == "status")
            after = _owned_paths(new, subresource == "status")
            changed = {p for p, v in after.items() if before.get(p, _MISSING) != v}
            return self._commit(key, self.by_plural[(group, plural)], new, manager, "Update", changed)

    def compact(self) -> None:
        """Forget history: watches from any older resourceVersion now get 410 Gone."""
        with self.lock:
            self.compacted_rv = self.current_rv
            self.watch_epoch += 1
            self.events.clear()
            self.event_rvs.clear()
            self.lock.notify_all()

    def _take_watch_fault(self, plural: str) -> str:
        for i, (p, mode) in enumerate(self.watch_faults):
            if p == plural:
                del self.watch_faults[i]
                return mode
        return ""

    # --- store ----------------------------------------------------------------------------------
    def _res_for(self, api_version: str, kind: str) -> tuple:
        group, _, version = api_version.rpartition("/")
        for r in RESOURCES:
            if r[0] == group and r[1] == version and r[2] == kind:
                return r
        raise KeyError((api_version, kind))

    def _next_rv(self) -> int:
        self.current_rv = next(self.rv)
        return self.current_rv

    def _commit(
        self,
        key,
        res,
        new: dict[str, Any],
        manager: str,
        operation: str,
        paths,
        persist: bool = True,
        managed_fields: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Store ``new`` (the merged object) with ``manager`` owning ``paths``; no-op writes change nothing.

        With ``managed_fields`` (the oracle's answer) those entries are stored as they are instead.
        """
        live = self.objects.get(key)
        owners = copy.deepcopy(self.owners.get(key, {}))
        paths = set(paths)
        for other, (_op, owned) in list(owners.items()):
            if other != manager:
                owned -= paths
                if not owned:
                    del owners[other]
        if manager in owners and operation == "Update":
            paths |= owners[manager][1]
        if paths:
            owners[manager] = (operation, paths)
        meta = new.setdefault("metadata", {})
        meta["name"], meta["namespace"] = key[3], key[2]
        if not key[2]:
            meta.pop("namespace", None)
        new["apiVersion"] = f"{res[0]}/{res[1]}" if res[0] else res[1]
        new["kind"] = res[2]
        if live is not None:
            for k in ("uid", "creationTimestamp", "generation", "resourceVersion"):
                meta[k] = live["metadata"][k]
            spec_changed = {k: v for k, v in new.items() if k not in ("metadata", "status")} != {
                k: v for k, v in live.items() if k not in ("metadata", "status")
            }
            if spec_changed:
                meta["generation"] = live["metadata"]["generation"] + 1
        else:
            meta.update(
                uid=str(uuid.UUID(int=len(self.objects) + 1 + self.current_rv)),
                creationTimestamp="2026-01-01T00:00:00Z",
                generation=1,
            )
        if managed_fields is not None:
            meta["managedFields"] = copy.deepcopy(managed_fields)
        else:
            meta["managedFields"] = [
                {
                    "manager": m,
                    "operation": op,
                    "apiVersion": new["apiVersion"],
                    "fieldsType": "FieldsV1",
                    "fieldsV1": _fields_v1(p),
                }
                for m, (op, p) in sorted(owners.items())
            ]
        unchanged = live is not None and _strip_rv(live) == _strip_rv(new)
        if unchanged:
            return copy.deepcopy(live)
        if not persist:
            if live is None:
                meta.pop("resourceVersion", None)
            return copy.deepcopy(new)
        meta["resourceVersion"] = str(self._next_rv())
        self.objects[key] = new
        self.owners[key] = owners
        self._event("ADDED" if live is None else "MODIFIED", key, new)
        for hook in list(self.on_write):
            hook("write", new)
        return copy.deepcopy(new)

    def _event(self, kind: str, key, obj: dict[str, Any]) -> None:
        self.events.append((self.current_rv, (key[0], key[1]), kind, copy.deepcopy(obj)))
        self.event_rvs.append(self.current_rv)
        self.lock.notify_all()

    def apply(
        self, key, res, body: dict[str, Any], manager: str, force: bool, dry_run: bool, status_only: bool
    ) -> tuple[int, dict[str, Any]]:
        meta = body.get("metadata") or {}
        if meta.get("name") and meta["name"] != key[3]:
            raise ApiFailure(400, "BadRequest", "the name of the object does not match the name on the URL")
        live = self.objects.get(key)
        if live is None and status_only:
            raise ApiFailure(404, "NotFound", f'{res[3]} "{key[3]}" not found')
        if self.oracle is not None:
            return self._oracle_apply(key, res, live, body, manager, force, dry_run, status_only)
        applied = _owned_paths(body, status_only)
        owners = self.owners.get(key, {})
        if live is not None and not force:
            causes = []
            for path, value in sorted(applied.items()):
                for other, (op, owned) in sorted(owners.items()):
                    if other != manager and path in owned and _get(live, path) != value:
                        using = f" using {live['apiVersion']}" if op == "Update" else ""
                        causes.append(
                            {
                                "reason": "FieldManagerConflict",
                                "message": f'conflict with "{other}"{using}',
                                "field": "." + ".".join(path),
                            }
                        )
            if causes:
                raise ApiFailure(409, "Conflict", conflict_message(causes), causes)
        new = copy.deepcopy(live) if live is not None else {}
        previously = owners.get(manager, ("Apply", set()))[1]
        for path in previously - set(applied):
            if not any(path in owned for m, (_, owned) in owners.items() if m != manager):
                _delete(new, path)
        for path, value in applied.items():
            _set(new, path, value)
        if live is not None and not status_only:
            self._check_immutable(key, res, live, new)
        code = 201 if live is None else 200
        return code, self._commit(key, res, new, manager, "Apply", applied, persist=not dry_run)

    def _check_immutable(self, key, res, live: dict[str, Any], new: dict[str, Any]) -> None:
        for path in self.immutable.get(res[2], []):
            if _get(live, path) is not _MISSING and _get(live, path) != _get(new, path):
                field_name = ".".join(path)
                msg = (
                    f'{res[2]}.{res[0] or "core"} "{key[3]}" is invalid: {field_name}: Invalid value: '
                    f"{json.dumps(_get(new, path), sort_keys=True)}: field is immutable"
                )
                raise ApiFailure(
                    422,
                    "Invalid",
                    msg,
                    [
                        {
                            "reason": "FieldValueInvalid",
                            "message": "Invalid value: field is immutable",
                            "field": field_name,
                        }
                    ],
                )

    # --- structured-merge-diff (FakeApi(oracle=...)) -------------------------------------------
    def _oracle_apply(
        self,
        key,
        res,
        live: dict[str, Any] | None,
        body: dict[str, Any],
        manager: str,
        force: bool,
        dry_run: bool,
        status_only: bool,
    ) -> tuple[int, dict[str, Any]]:
        from smd import OracleConflict, OracleError

        config = copy.deepcopy(body)
        config.setdefault("apiVersion", f"{res[0]}/{res[1]}" if res[0] else res[1])
        config.setdefault("kind", res[2])
        try:
            result = self.oracle.apply(live, config, manager, force=force, subresource="status" if status_only else "")
        except OracleConflict as conflict:
            causes = [
                {"reason": "FieldManagerConflict", "message": c.message, "field": c.field} for c in conflict.conflicts
            ]
            raise ApiFailure(409, "Conflict", conflict_message(causes), causes) from None
        except OracleError as err:
            # kube-apiserver (1.20, checked) answers a patch it cannot type (a keyed list item without its key, a
            # string where a number belongs, a field its version does not know) with 500 and no reason
            raise ApiFailure(500, "", f"failed to create typed patch object: {err}") from None
        if live is not None and not status_only:
            self._check_immutable(key, res, live, result.object)
        code = 201 if live is None else 200
        return code, self._commit(
            key, res, result.object, manager, "Apply", (), persist=not dry_run, managed_fields=result.managed_fields
        )

    def _oracle_update(self, key, res, new: dict[str, Any], manager: str, subresource: str = "") -> dict[str, Any]:
        from smd import OracleConflict, OracleError

        new.setdefault("apiVersion", f"{res[0]}/{res[1]}" if res[0] else res[1])
        new.setdefault("kind", res[2])
        try:
            result = self.oracle.update(self.objects.get(key), new, manager, subresource=subresource)
        except (OracleConflict, OracleError) as err:
            raise ApiFailure(500, "InternalError", f"{key[3]}: {err}") from None
        return self._commit(key, res, result.object, manager, "Update", (), managed_fields=result.managed_fields)


def _load_body(raw: bytes, ctype: str) -> Any:
    """JSON, or YAML for apply patches (clients mostly send JSON, which is YAML too: try the fast parser first)."""
    try:
        return json.loads(raw)
    except ValueError:
        if "yaml" not in ctype:
            raise
        return yaml.safe_load(raw)


def _strip_rv(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].pop("resourceVersion", None)
    return out


def _match_labels(obj: dict[str, Any], selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _match_fields(obj: dict[str, Any], selector: str) -> bool:
    meta = obj.get("metadata") or {}
    for term in filter(None, selector.split(",")):
        k, v = term.split("=", 1)
        field_name = k.rsplit(".", 1)[-1]
        if str(meta.get(field_name, "")) != v:
            return False
    return True


_PATH = re.compile(
    r"^/(?:api/(?P<cv>v1)|apis/(?P<g>[^/]+)/(?P<v>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>status|scale))?$"
)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeApi
    protocol_version = "HTTP/1.0"

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, code: int, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        fake = self.fake
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        ctype = self.headers.get("Content-Type", "")
        body = None
        if raw:
            body = _load_body(raw, ctype)
        req = Request(method, url.path, query, ctype, body)
        with fake.lock:
            fake.log.append(req)
            fault = next((f for f in fake.faults if f.matches(req)), None)
            if fault:
                fault.times -= 1
        delay = 0.0
        if fault and fault.status is None:
            delay, fault = fault.delay, None
        if fault:
            if fault.status == 0:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if fault.raw is not None:
                return self._send_raw(fault.status, fault.raw)
            return self._send(fault.status, fault.body, fault.headers)
        try:
            if (
                url.path in ("/api", "/apis", "/version")
                or url.path.count("/") <= 3
                and method == "GET"
                and not _PATH.match(url.path)
            ):
                return self._send(200, self._discovery(url.path))
            m = _PATH.match(url.path)
            if not m:
                raise ApiFailure(404, "NotFound", f"no route for {url.path}")
            group = m.group("g") or ""
            version = m.group("cv") or m.group("v")
            res = fake.by_plural.get((group, m.group("plural")))
            if res is None or res[1] != version:
                raise ApiFailure(404, "NotFound", f"the server could not find the requested resource {url.path}")
            ns = m.group("ns") or ""
            name, sub = m.group("name"), m.group("sub") or ""
            if method == "GET" and not name and query.get("watch") in ("true", "1"):
                return self._watch(res, ns, query)
            code, out = self._dispatch(method, res, ns, name, sub, query, body, ctype)
            if delay:
                import time as _time

                _time.sleep(delay)
            self._send(code, out)
        except ApiFailure as failure:
            self._send(failure.code, failure.body)

    def _discovery(self, path: str) -> dict[str, Any]:
        if path == "/version":
            return {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake"}
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            groups: dict[str, list[str]] = {}
            for g, v, *_ in RESOURCES:
                if g and v not in groups.setdefault(g, []):
                    groups[g].append(v)
            return {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [
                    {
                        "name": g,
                        "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                        "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]},
                    }
                    for g, vs in sorted(groups.items())
                ],
            }
        parts = path.strip("/").split("/")
        if parts[0] == "apis" and len(parts) == 2:
            versions = [v for g, v, *_ in RESOURCES if g == parts[1]]
            if not versions:
                raise ApiFailure(404, "NotFound", f"no group {parts[1]}")
            gvs = [{"groupVersion": f"{parts[1]}/{v}", "version": v} for v in dict.fromkeys(versions)]
            return {
                "kind": "APIGroup",
                "apiVersion": "v1",
                "name": parts[1],
                "versions": gvs,
                "preferredVersion": gvs[0],
            }
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2] if len(parts) > 2 else "")
        resources = []
        for g, v, kind, plural, namespaced, has_status in RESOURCES:
            if g == group and v == version:
                verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
                resources.append(
                    {
                        "name": plural,
                        "singularName": kind.lower(),
                        "namespaced": namespaced,
                        "kind": kind,
                        "verbs": verbs,
                    }
                )
                if has_status:
                    resources.append(
                        {
                            "name": f"{plural}/status",
                            "singularName": "",
                            "namespaced": namespaced,
                            "kind": kind,
                            "verbs": ["get", "patch", "update"],
                        }
                    )
        if not resources:
            raise ApiFailure(404, "NotFound", f"no group version {group}/{version}")
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}

    def _dispatch(self, method, res, ns, name, sub, query, body, ctype) -> tuple[int, Any]:
        fake = self.fake
        group, version, kind, plural, namespaced, _ = res
        ns = ns if namespaced else ""
        key = (group, plural, ns, name)
        with fake.lock:
            if method == "GET" and name:
                obj = fake.objects.get(key)
                if obj is None:
                    raise ApiFailure(404, "NotFound", f'{plural}.{group} "{name}" not found')
                return 200, copy.deepcopy(obj)
            if method == "GET":
                items = [
                    copy.deepcopy(o)
                    for k, o in sorted(fake.objects.items())
                    if k[0] == group
                    and k[1] == plural
                    and (not ns or k[2] == ns)
                    and _match_labels(o, query.get("labelSelector", ""))
                    and _match_fields(o, query.get("fieldSelector", ""))
                ]
                for item in items:
                    item.pop("apiVersion", None)
                    item.pop("kind", None)
                return 200, {
                    "kind": f"{kind}List",
                    "apiVersion": f"{group}/{version}" if group else version,
                    "metadata": {"resourceVersion": str(fake.current_rv)},
                    "items": items,
                }
            if method == "PATCH":
                if ctype != "application/apply-patch+yaml":
                    raise ApiFailure(415, "UnsupportedMediaType", f"fake supports only apply patches, got {ctype}")
                manager = query.get("fieldManager")
                if not manager:
                    raise ApiFailure(422, "Invalid", "fieldManager is required for apply requests")
                force = query.get("force") == "true"
                dry = query.get("dryRun") == "All"
                return fake.apply(key, res, body or {}, manager, force, dry, sub == "status")
            if method == "DELETE":
                obj = fake.objects.pop(key, None)
                if obj is None:
                    raise ApiFailure(404, "NotFound", f'{plural}.{group} "{name}" not found')
                fake.owners.pop(key, None)
                fake._next_rv()
                fake._event("DELETED", key, obj)
                return 200, _status_body(200, "", "deleted") | {"status": "Success"}
            if method == "POST":
                name = (body.get("metadata") or {}).get("name")
                key = (group, plural, ns, name)
                if key in fake.objects:
                    raise ApiFailure(409, "AlreadyExists", f'{plural}.{group} "{name}" already exists')
                if fake.oracle is not None:
                    return 201, fake._oracle_update(key, res, copy.deepcopy(body), query.get("fieldManager", "unknown"))
                return 201, fake._commit(
                    key,
                    res,
                    copy.deepcopy(body),
                    query.get("fieldManager", "unknown"),
                    "Update",
                    _owned_paths(body, False).keys(),
                )
            if method == "PUT":
                live = fake.objects.get(key)
                if live is None:
                    raise ApiFailure(404, "NotFound", f'{plural}.{group} "{name}" not found')
                if (body.get("metadata") or {}).get("resourceVersion") != live["metadata"]["resourceVersion"]:
                    raise ApiFailure(
                        409,
                        "Conflict",
                        "the object has been modified; please apply your changes to the latest version and try again",
                    )
                new = copy.deepcopy(body)
                if fake.oracle is not None:
                    return 200, fake._oracle_update(key, res, new, query.get("fieldManager", "unknown"))
                return 200, fake._commit(
                    key, res, new, query.get("fieldManager", "unknown"), "Update", _owned_paths(body, False).keys()
                )
        raise ApiFailure(405, "MethodNotAllowed", method)

    def _watch(self, res, ns, query) -> None:
        fake = self.fake
        group, version, kind, plural, namespaced, _ = res
        since = int(query.get("resourceVersion") or 0)
        timeout = float(query.get("timeoutSeconds") or 30)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")  # as kube-apiserver streams watches
        self.end_headers()

        def emit(event: dict[str, Any]) -> None:
            self._chunk(json.dumps(event).encode() + b"\n")

        import time as _time

        deadline = _time.monotonic() + timeout
        sent_rv = since
        try:
            with fake.lock:
                epoch = fake.watch_epoch
                while not fake._stopping:
                    if since < fake.compacted_rv or epoch != fake.watch_epoch:
                        emit(
                            {
                                "type": "ERROR",
                                "object": _status_body(
                                    410, "Expired", f"too old resource version: {since} ({fake.compacted_rv})"
                                ),
                            }
                        )
                        return
                    first = bisect.bisect_right(fake.event_rvs, sent_rv)
                    for rv, gp, etype, obj in fake.events[first:]:
                        if rv <= sent_rv or gp != (group, plural):
                            continue
                        if ns and (obj.get("metadata") or {}).get("namespace") != ns:
                            continue
                        if not _match_fields(obj, query.get("fieldSelector", "")):
                            continue
                        if not _match_labels(obj, query.get("labelSelector", "")):
                            continue
                        emit({"type": etype, "object": obj})
                        sent_rv = rv
                    mode = fake._take_watch_fault(plural)
                    if mode:
                        fake.lock.release()
                        try:
                            if self._watch_fault(mode, emit):
                                return
                        finally:
                            fake.lock.acquire()
                    remaining = deadline - _time.monotonic()
                    if remaining <= 0:
                        return
                    if query.get("allowWatchBookmarks") == "true" and sent_rv < fake.current_rv:
                        sent_rv = fake.current_rv
                        emit(
                            {
                                "type": "BOOKMARK",
                                "object": {
                                    "kind": kind,
                                    "apiVersion": f"{group}/{version}" if group else version,
                                    "metadata": {"resourceVersion": str(sent_rv)},
                                },
                            }
                        )
                    fake.lock.wait(min(remaining, 0.5))
        except (BrokenPipeError, ConnectionResetError, OSError):
            return
        finally:
            if not getattr(self, "_was_reset", False):
                try:
                    self.wfile.write(b"0\r\n\r\n")  # the end of a chunked stream: a clean close
                    self.wfile.flush()
                except OSError:
                    pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch_fault(self, mode: str, emit: Callable[[dict[str, Any]], None]) -> bool:
        """Inject one watch failure; True when the stream is over."""
        import time as _time

        if mode == "garbage":
            self._chunk(b"this is not json\n")
        elif mode == "error":
            emit({"type": "ERROR", "object": _status_body(500, "InternalError", "etcd leader changed")})
        elif mode == "reset":
            self._was_reset = True
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            self.connection.close()
        elif mode == "hang":
            while not self.fake._stopping:
                _time.sleep(0.05)
        return True  # "close" and everything else: end the stream
