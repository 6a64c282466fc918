"""A server-side-apply oracle for the apply-loop tests: structured-merge-diff behind a small Go program.

``oracle.go`` (next to this file) is built once per test session, offline, in GOPATH mode against
Debian's ``golang-k8s-sigs-structured-merge-diff-dev`` sources; ``schema.yaml`` says how each kind we
apply merges. :class:`Oracle` keeps one process running and sends it one JSON request per merge.

Install (Debian 12): ``apt-get install -y --no-install-recommends golang-go golang-k8s-sigs-structured-merge-diff-dev``.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "oracle.go"
SCHEMA = HERE / "schema.yaml"
GOCODE = Path(os.environ.get("KC_GOCODE", "/usr/share/gocode/src"))
SMD_SOURCE = GOCODE / "sigs.k8s.io" / "structured-merge-diff"
SMD_IMPORT = "sigs.k8s.io/structured-merge-diff/v4"
INSTALL_HINT = "apt-get install -y --no-install-recommends golang-go golang-k8s-sigs-structured-merge-diff-dev"

# (group, kind) -> SMD type name in schema.yaml; every other kind uses the generic object type
TYPES: dict[tuple[str, str], str] = {
    ("apps", "Deployment"): "io.k8s.api.apps.v1.Deployment",
    ("", "Service"): "io.k8s.api.core.v1.Service",
    ("autoscaling", "HorizontalPodAutoscaler"): "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
    ("networking.k8s.io", "Ingress"): "io.k8s.api.networking.v1.Ingress",
}
GENERIC_TYPE = "__object"

# Fields the apiserver resets per endpoint: an apply to the object never sets status, a status
# apply never sets spec (they are neither merged from the request nor owned by its manager).
RESET_FIELDS: dict[str, list[list[str]]] = {"": [["status"]], "status": [["spec"]]}


def missing() -> str | None:
    """Why the oracle cannot be built here, or None when it can."""
    if shutil.which("go") is None:
        return f"`go` is not installed (install: {INSTALL_HINT})"
    if not (SMD_SOURCE / "merge" / "update.go").is_file():
        return f"structured-merge-diff source not found at {SMD_SOURCE} (install: {INSTALL_HINT})"
    return None


def build(workdir: Path) -> Path:
    """Compile oracle.go into ``workdir`` without any network access; returns the binary's path."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    gopath = workdir / "gopath"
    link = gopath / "src" / SMD_IMPORT
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        # Debian ships SMD without its /v4 major-version suffix; GOPATH mode needs the import path.
        link.symlink_to(SMD_SOURCE, target_is_directory=True)
    binary = workdir / "smd-oracle"
    env = dict(
        os.environ,
        GO111MODULE="off",
        GOFLAGS="",
        GOPROXY="off",
        GOTOOLCHAIN="local",
        GOPATH=f"{gopath}{os.pathsep}{GOCODE.parent}",
    )
    if not _go_cache_usable(env):
        env["GOCACHE"] = str(workdir / "gocache")
    proc = subprocess.run(
        ["go", "build", "-o", str(binary), str(SOURCE)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"building {SOURCE.name} failed:\n{proc.stderr.strip()}")
    return binary


def build_once(basetemp: Path) -> Path:
    """The oracle binary under ``basetemp`` (pytest's per-session temp root), built on first use."""
    workdir = basetemp / "smd-oracle"
    binary = workdir / "smd-oracle"
    if not binary.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        build(workdir)
    return binary


def _go_cache_usable(env: dict[str, str]) -> bool:
    proc = subprocess.run(["go", "env", "GOCACHE"], env=env, capture_output=True, text=True)
    cache = proc.stdout.strip()
    if proc.returncode != 0 or not cache or cache == "off":
        return False
    try:
        Path(cache).mkdir(parents=True, exist_ok=True)
        return os.access(cache, os.W_OK)
    except OSError:
        return False


@dataclass
class Conflict:
    manager: str
    operation: str
    subresource: str
    api_version: str
    field: str  # SMD path syntax: .spec.replicas, .spec.template.spec.containers[name="c"].image
    message: str  # conflict with "kube-controller-manager" with subresource "scale" using apps/v1


class OracleConflict(Exception):
    def __init__(self, message: str, conflicts: list[Conflict]) -> None:
        super().__init__(message)
        self.conflicts = conflicts


class OracleError(Exception):
    """The request itself is wrong for the schema (e.g. a keyed list item without its key)."""


@dataclass
class Result:
    object: dict[str, Any]
    managed_fields: list[dict[str, Any]]
    changed: bool
    owners: dict[str, Any] = field(default_factory=dict)  # "manager/Operation[/subresource]" -> fieldsV1

    def owner_of(self, *path: str) -> list[str]:
        """Managers whose fieldsV1 contains ``path`` (``f:``/``k:`` segments), sorted."""
        return sorted(name for name, fields in self.owners.items() if _has(fields, path))


def _has(fields: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = fields
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def owner_name(entry: dict[str, Any]) -> str:
    name = f"{entry['manager']}/{entry['operation']}"
    return name + (f"/{entry['subresource']}" if entry.get("subresource") else "")


def type_for(obj: dict[str, Any]) -> str:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    return TYPES.get((group, str(obj.get("kind", ""))), GENERIC_TYPE)


class Oracle:
    """One long-lived oracle process; thread-safe (the fake API server handles requests in threads)."""

    def __init__(self, binary: Path, schema: str | None = None) -> None:
        self.schema = schema if schema is not None else SCHEMA.read_text()
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
        self.calls = 0

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream:
                stream.close()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def apply(
        self,
        live: dict[str, Any] | None,
        config: dict[str, Any],
        manager: str,
        *,
        force: bool = False,
        managed_fields: list[dict[str, Any]] | None = None,
        subresource: str = "",
    ) -> Result:
        """Server-side apply ``config`` onto ``live`` as ``manager``; raises :class:`OracleConflict`."""
        return self._call("apply", live, config, manager, force, managed_fields, subresource)

    def update(
        self,
        live: dict[str, Any] | None,
        new: dict[str, Any],
        manager: str,
        *,
        managed_fields: list[dict[str, Any]] | None = None,
        subresource: str = "",
    ) -> Result:
        """A non-apply write (PUT/PATCH/POST, an HPA via /scale) of ``new`` by ``manager``."""
        return self._call("update", live, new, manager, False, managed_fields, subresource)

    def _call(
        self,
        op: str,
        live: dict[str, Any] | None,
        obj: dict[str, Any],
        manager: str,
        force: bool,
        managed_fields: list[dict[str, Any]] | None,
        subresource: str,
    ) -> Result:
        if managed_fields is None and live is not None:
            managed_fields = (live.get("metadata") or {}).get("managedFields") or []
        ignore = RESET_FIELDS.get(subresource, [])
        if op == "update":
            obj = _reset(obj, live, ignore)
        request = {
            "schema": self.schema,
            "type": type_for(obj),
            "op": op,
            "apiVersion": obj.get("apiVersion", ""),
            "manager": manager,
            "subresource": subresource,
            "force": force,
            "live": _without_managed_fields(live),
            "object": _without_managed_fields(obj),
            "managedFields": managed_fields or [],
            "ignore": ignore,
        }
        with self._lock:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            try:
                self._proc.stdin.write(json.dumps(request) + "\n")
                self._proc.stdin.flush()
                line = self._proc.stdout.readline()
            except (BrokenPipeError, OSError) as err:
                raise RuntimeError(f"oracle process died: {err}") from err
            self.calls += 1
        if not line:
            err = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"oracle process exited: {err.strip()}")
        answer = json.loads(line)
        if answer.get("conflicts"):
            raise OracleConflict(
                answer["error"],
                [
                    Conflict(
                        c["manager"],
                        c["operation"],
                        c.get("subresource", ""),
                        c["apiVersion"],
                        c["field"],
                        c["message"],
                    )
                    for c in answer["conflicts"]
                ],
            )
        if answer.get("error"):
            raise OracleError(answer["error"])
        entries = answer.get("managedFields") or []
        return Result(
            answer["object"], entries, bool(answer.get("changed")), {owner_name(e): e["fieldsV1"] for e in entries}
        )


def _reset(obj: dict[str, Any], live: dict[str, Any] | None, paths: list[list[str]]) -> dict[str, Any]:
    """``obj`` with each reset path holding its live value (or absent), as the apiserver's strategies do."""
    out = copy.deepcopy(obj)
    for path in paths:
        parent: Any = out
        for part in path[:-1]:
            parent = parent.setdefault(part, {}) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        source: Any = live or {}
        for part in path:
            source = source.get(part) if isinstance(source, dict) else None
        if source is None:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = copy.deepcopy(source)
    return out


def _without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    (out.get("metadata") or {}).pop("managedFields", None)
    return out
