"""A thin REST layer over the official ``kubernetes`` client's ApiClient.

The generated typed APIs cover only built-in kinds and hide query parameters; the apply loop needs
exact control over ``fieldManager``/``force``/``dryRun``, the apply-patch content type, status
subresources and watches of custom resources, so it builds paths itself from API discovery and
sends them through ``ApiClient`` (auth, TLS and kubeconfig handling stay the official client's).

Retries: 429 (honouring ``Retry-After``), 500/502/503/504 and dropped connections are retried with
exponential backoff, except a 500 that says the apply patch cannot be typed (``ApiError.is_untypable``);
everything else is raised as :class:`ApiError` at once. A server that cannot be
reached after every retry raises :class:`ClusterUnreachable`, one that refuses our credentials during
discovery :class:`ClusterRefused`; both name the server and the kubeconfig context. Watches have a
client-side read timeout and raise :class:`WatchBroken` when their stream fails mid-way (informer.py
recovers from it).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kserve_compile.apply.objects import Obj, split_api_version

APPLY_PATCH = "application/apply-patch+yaml"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
UNTYPABLE_PATCH = "failed to create typed patch object"
# Connections kept open to the API server. The client's default (5 per CPU) is below what the daemon holds at once —
# a watch per informer plus the workers' requests — so every request past it opened a new TLS connection and
# dropped it ("Connection pool is full"). A bound, not an allocation.
POOL_SIZE = 256


@dataclass
class ApiError(Exception):
    status: int
    reason: str = ""
    message: str = ""
    causes: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.status} {self.reason}: {self.message}".strip()

    @property
    def is_immutable(self) -> bool:
        texts = [self.message] + [str(c.get("message", "")) for c in self.causes]
        return self.status in (409, 422) and any("immutable" in t for t in texts)

    @property
    def is_untypable(self) -> bool:
        """kube-apiserver's answer to an apply patch its schema cannot type (a string where a number belongs, a
        field the server's version does not know): a 500, but a verdict on the input — retrying cannot help."""
        return self.status == 500 and self.message.startswith(UNTYPABLE_PATCH)

    @property
    def is_conflict(self) -> bool:
        return self.status == 409 and not self.is_immutable


class WatchExpired(Exception):
    """The server answered a watch with 410 Gone: the resourceVersion is too old; relist."""


class ClusterRefused(ApiError):
    """The API server answered discovery with 401/403: bad or missing credentials; names the server and context."""

    def __init__(self, server: str, context: str, err: ApiError) -> None:
        where = f"the API server at {server or '?'}" + (f" (kubeconfig context {context!r})" if context else "")
        super().__init__(
            err.status,
            err.reason,
            f"{where} refused the request: {err.status} {err.reason}: {err.message}".rstrip(": "),
        )
        self.server, self.context = server, context


class WatchBroken(Exception):
    """A watch stream failed mid-way: connection reset, protocol error, read timeout, or a line that is not JSON."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason


class ClusterUnreachable(ApiError):
    """No answer from the API server after every retry (refused, reset, DNS, TLS); names the server and context."""

    def __init__(self, server: str, context: str, detail: str) -> None:
        where = f"the API server at {server or '?'}" + (f" (kubeconfig context {context!r})" if context else "")
        super().__init__(0, "ConnectionError", f"cannot reach {where}: {detail}")
        self.server, self.context = server, context


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base


@dataclass
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.2
    max_delay: float = 10.0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.max_delay)
            except ValueError:
                pass
        return min(self.base_delay * (2**attempt), self.max_delay)


def load_api_client(kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False) -> Any:
    """An ``ApiClient`` from in-cluster config or a kubeconfig; its urllib3 retries are disabled (ours apply)."""
    from kubernetes import client, config

    cfg = client.Configuration()
    if in_cluster:
        config.load_incluster_config(client_configuration=cfg)
    else:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    cfg.retries = False
    cfg.connection_pool_maxsize = POOL_SIZE
    if not cfg.verify_ssl:
        _insecure_once(cfg.host)
    return client.ApiClient(cfg)


def _insecure_once(host: str) -> None:
    """One line when TLS verification is off, instead of urllib3's InsecureRequestWarning on every request."""
    import sys
    import warnings

    import urllib3

    warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
    sys.stderr.write(
        f"warning: TLS certificate verification is off for {host} (insecure-skip-tls-verify in the kubeconfig): "
        "the API server is not authenticated\n"
    )


def current_context(kubeconfig: str | None, context: str | None) -> str:
    """The kubeconfig context a client would use, for messages ("" when it cannot be told)."""
    if context:
        return context
    try:
        from kubernetes import config

        _, active = config.list_kube_config_contexts(config_file=kubeconfig)
        return str((active or {}).get("name", ""))
    except Exception:  # noqa: BLE001 - only used to word an error message
        return ""


def api_client_for_host(host: str) -> Any:
    """An ``ApiClient`` for a plain-HTTP server (tests and ``--server``)."""
    from kubernetes import client

    cfg = client.Configuration()
    cfg.host = host
    cfg.retries = False
    cfg.connection_pool_maxsize = POOL_SIZE
    return client.ApiClient(cfg)


class Kube:
    """Typed-enough access to any resource; counts requests so callers can report what a run cost."""

    def __init__(
        self, api_client: Any, retry: RetryPolicy | None = None, timeout: float = 30.0, context: str = ""
    ) -> None:
        self.api = api_client
        self.server = str(getattr(getattr(api_client, "configuration", None), "host", "") or "")
        self.context = context
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._resources: dict[tuple[str, str], Resource] = {}
        self._discovered: set[str] = set()
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # "GET", "PATCH", "PATCH(dry-run)", ...

    # --- discovery ----------------------------------------------------------------------------
    def resource(self, api_version: str, kind: str) -> Resource:
        with self._lock:
            found = self._resources.get((api_version, kind))
        if found:
            return found
        self._discover(api_version)
        with self._lock:
            found = self._resources.get((api_version, kind))
        if not found:
            raise ApiError(404, "NotFound", f"the server does not serve kind {kind!r} in {api_version!r}")
        return found

    def _discover(self, api_version: str) -> None:
        if api_version in self._discovered:
            return
        group, version = split_api_version(api_version)
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            body = self.request("GET", path)
        except ApiError as err:
            if err.status == 404:
                raise ApiError(404, "NotFound", f"the server does not serve API version {api_version!r}") from None
            if err.status in (401, 403):
                raise ClusterRefused(self.server, self.context, err) from None
            raise
        with self._lock:
            for res in (body or {}).get("resources") or []:
                if "/" in res.get("name", ""):
                    continue  # subresources
                r = Resource(group, version, res["kind"], res["name"], bool(res.get("namespaced")))
                self._resources[(api_version, res["kind"])] = r
            self._discovered.add(api_version)

    def resource_for_group_kind(self, group: str, kind: str) -> Resource:
        """The resource for ``Kind.group`` at the group's preferred version (ApplySet records no versions)."""
        with self._lock:
            for (_, k), res in self._resources.items():
                if k == kind and res.group == group:
                    return res
        version = "v1"
        if group:
            body = self.request("GET", f"/apis/{group}") or {}
            version = str((body.get("preferredVersion") or {}).get("groupVersion", f"{group}/v1"))
        return self.resource(version, kind)

    def resource_of(self, obj: Obj) -> Resource:
        return self.resource(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    # --- transport ----------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None = None,
        body: Any = None,
        content_type: str | None = None,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> Any:
        label = method + ("(dry-run)" if query and ("dryRun", "All") in query else "")
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        attempt = 0
        while True:
            self.requests[label] += 1
            try:
                resp = self._send(method, path, query, headers, body, stream, read_timeout)
            except _Dropped as dropped:
                if attempt + 1 >= self.retry.attempts or stream:
                    raise ClusterUnreachable(self.server, self.context, f"{method} {path}: {dropped}") from None
                self.retry.sleep(self.retry.delay(attempt, None))
                attempt += 1
                continue
            if resp.status < 300:
                if stream:
                    return resp.response
                data = resp.read()
                return json.loads(data) if data else None
            error = _api_error(resp.status, resp.reason, resp.read())
            if resp.status in RETRY_STATUSES and not error.is_untypable and attempt + 1 < self.retry.attempts:
                self.retry.sleep(self.retry.delay(attempt, resp.headers.get("Retry-After")))
                attempt += 1
                continue
            raise error

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None,
        headers: dict[str, str],
        body: Any,
        stream: bool,
        read_timeout: float | None = None,
    ) -> Any:
        import urllib3

        try:
            req = self.api.param_serialize(
                method,
                path,
                query_params=list(query or []),
                header_params=dict(headers),
                body=body,
                auth_settings=["BearerToken"],
            )
            # a watch waits for events, so only its connect is bounded by the request timeout; its reads are
            # bounded by read_timeout (a silent, half-open connection must not hang an informer forever)
            timeout = (self.timeout, read_timeout) if stream else self.timeout
            return self.api.call_api(*req, _request_timeout=timeout)
        except (urllib3.exceptions.HTTPError, ConnectionError, OSError) as err:
            raise _Dropped(str(err)) from None

    @property
    def writes(self) -> int:
        return sum(n for label, n in self.requests.items() if label in WRITE_METHODS)

    # --- verbs --------------------------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> Obj | None:
        try:
            return self.request("GET", res.path(namespace, name))
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def list(
        self, res: Resource, namespace: str = "", label_selector: str = "", field_selector: str = ""
    ) -> tuple[list[Obj], str]:
        query: list[tuple[str, Any]] = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        body = self.request("GET", res.path(namespace), query) or {}
        items = body.get("items") or []
        for item in items:  # LIST items carry no apiVersion/kind
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return items, str((body.get("metadata") or {}).get("resourceVersion", ""))

    def apply(self, obj: Obj, field_manager: str, force: bool, dry_run: bool = False, subresource: str = "") -> Obj:
        res = self.resource_of(obj)
        meta = obj.get("metadata") or {}
        query: list[tuple[str, Any]] = []
        if dry_run:
            query.append(("dryRun", "All"))
        query += [("fieldManager", field_manager), ("force", "true" if force else "false")]
        return self.request(
            "PATCH",
            res.path(meta.get("namespace", ""), meta["name"], subresource),
            query,
            body=obj,
            content_type=APPLY_PATCH,
        )

    def delete(self, res: Resource, namespace: str, name: str, propagation: str = "Background") -> bool:
        try:
            self.request(
                "DELETE",
                res.path(namespace, name),
                body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation},
            )
            return True
        except ApiError as err:
            if err.status == 404:
                return False
            raise

    def watch(
        self,
        res: Resource,
        namespace: str,
        resource_version: str,
        timeout_seconds: int = 300,
        field_selector: str = "",
        label_selector: str = "",
        read_timeout: float | None = None,
        on_open: Callable[[Any], None] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Events (``{"type", "object"}``) from ``resource_version`` on.

        Raises WatchExpired on 410 Gone and WatchBroken when the stream fails mid-way (reset, protocol error,
        no byte for ``read_timeout`` seconds — default ``timeout_seconds`` + 30 —, a line that is not JSON).
        ``on_open`` is called with the open response once the server has accepted the watch (so that another
        thread can shut the stream down).
        """
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", timeout_seconds),
        ]
        if field_selector:
            query.append(("fieldSelector", field_selector))
        if label_selector:
            query.append(("labelSelector", label_selector))
        limit = read_timeout if read_timeout is not None else timeout_seconds + 30.0
        try:
            raw = self.request("GET", res.path(namespace), query, stream=True, read_timeout=limit)
        except ApiError as err:
            if err.status == 410:
                raise WatchExpired(err.message) from None
            raise
        if on_open is not None:
            on_open(raw)
        try:
            yield from self._stream_events(raw, res)
        finally:
            raw.release_conn()

    def _stream_events(self, raw: Any, res: Resource) -> Iterator[dict[str, Any]]:
        import urllib3

        buf = b""
        try:
            for chunk in raw.stream(4096, decode_content=False):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield self._event(_json_line(line), res)
        except urllib3.exceptions.ReadTimeoutError as err:
            raise WatchBroken("timeout", str(err)) from None
        except (urllib3.exceptions.HTTPError, OSError) as err:
            raise WatchBroken("reset", f"{type(err).__name__}: {err}") from None
        if buf.strip():
            yield self._event(_json_line(buf), res)

    @staticmethod
    def _event(event: dict[str, Any], res: Resource) -> dict[str, Any]:
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            if obj.get("code") == 410:
                raise WatchExpired(str(obj.get("message", "")))
            raise ApiError(int(obj.get("code") or 500), str(obj.get("reason", "")), str(obj.get("message", "")))
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
        return event


class _Dropped(Exception):
    pass


def _json_line(line: bytes) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError:
        raise WatchBroken("decode", f"watch line is not JSON: {line[:80]!r}") from None
    if not isinstance(event, dict) or not isinstance(event.get("object"), dict) or "type" not in event:
        raise WatchBroken("decode", f"watch line is not an event: {line[:80]!r}")
    return event


def _api_error(status: int, reason: str, data: bytes) -> ApiError:
    try:
        body = json.loads(data) if data else {}
    except ValueError:
        body = {"message": data.decode(errors="replace")[:500]}
    if not isinstance(body, dict):
        body = {}
    causes = (body.get("details") or {}).get("causes") or []
    return ApiError(status, str(body.get("reason") or reason or ""), str(body.get("message", "")), list(causes))
