"""A real Kubernetes control plane for tests: etcd + kube-apiserver (+ kube-controller-manager on demand).

The binaries come from ``$KUBEBUILDER_ASSETS``, the envtest convention: a directory holding ``etcd``,
``kube-apiserver`` and (for :meth:`ApiServer.start_controller_manager`) ``kube-controller-manager``.
``scripts/kube-assets.sh`` builds Kubernetes 1.20.2 from Debian's packages and prints such a directory;
``setup-envtest use -p path`` prints one for a current release (it has no controller manager). Nothing here
assumes a version: flags that only some releases know are probed on the binary (``--flag --version``).

Everything binds 127.0.0.1 on free ports, lives in one temporary directory, and is stopped by :meth:`stop`
(each process is its own session, so nothing it forks survives). Auth is a bearer token (``--token-auth-file``,
user ``admin`` in ``system:masters``) with ``--authorization-mode AlwaysAllow``; the serving certificate is the
apiserver's self-signed one (its CA is in the kubeconfig).

Use in pytest: the fixtures are in ``tests/integration/conftest.py``, so a test file in tests/integration/ just
names them (they skip, saying so, where KUBEBUILDER_ASSETS is unset; a set but broken one fails)::

    def test_something(apiserver, kube_namespace):
        apiserver.kubeconfig        # path of a kubeconfig (context "test", token auth)
        apiserver.server            # "https://127.0.0.1:PORT"
        apiserver.token
        api = apiserver.api_client()            # kubernetes.client.ApiClient, closed by the caller
        apiserver.apply_file("deploy/crds/crds.yaml")     # server-side apply, like kubectl apply --server-side
        apiserver.get("apps/v1", "Deployment", "x", kube_namespace)   # dict, or None when absent
        apiserver.request("GET", "/api/v1/namespaces")  # (status, parsed JSON body)
        apiserver.wait_for(lambda: ..., timeout=30, what="the Deployment")

``apiserver`` is one server per test session; ``kube_namespace`` is a fresh namespace per test. For the garbage
collector and the Deployment controller take ``controllers`` instead (the same server, with
kube-controller-manager started once). A test that needs its own server uses ``with ApiServer.from_env() as s:``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ASSETS_ENV = "KUBEBUILDER_ASSETS"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
FIELD_MANAGER = "kserve-compile-tests"
ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "deploy" / "crds" / "crds.yaml"

# Flags only some releases know, added where the binary accepts them: (binary, flag).
# kube-apiserver 1.20 still defaults to an insecure port (removed in 1.24); kube-controller-manager 1.20 serves
# insecure metrics on 10252 unless --port=0 (removed later). Both would bind fixed ports.
VERSIONED_FLAGS = [
    ("kube-apiserver", "--insecure-port=0"),
    ("kube-controller-manager", "--port=0"),
]

# What kube-controller-manager runs here: the garbage collector (owner references), Deployments and their
# ReplicaSets, and namespace deletion (so deleting a namespace empties it). No pods are ever scheduled.
CONTROLLERS = "garbagecollector,deployment,replicaset,namespace"


class AssetsError(RuntimeError):
    """KUBEBUILDER_ASSETS is set but does not hold what is needed."""


class StartError(RuntimeError):
    """A control-plane process did not come up; the message carries the tail of its log."""


def assets_dir() -> Path | None:
    """The directory named by KUBEBUILDER_ASSETS, or None when unset (tests then skip)."""
    value = os.environ.get(ASSETS_ENV, "").strip()
    return Path(value) if value else None


def require_assets() -> Path:
    """The assets directory, or a pytest skip saying why there is none."""
    assets = assets_dir()
    if assets is None:
        import pytest

        pytest.skip(f"{ASSETS_ENV} is unset: these tests need a real kube-apiserver (docs/install.md)")
    return assets


def find_binary(assets: Path, name: str) -> Path:
    path = assets / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise AssetsError(f"{ASSETS_ENV}={assets}: no executable {name!r} there (scripts/kube-assets.sh builds one)")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def binary_version(binary: Path) -> tuple[int, int]:
    """(major, minor) from ``--version`` ("Kubernetes v1.20.2", "etcd Version: 3.4.23")."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"v?(\d+)\.(\d+)\.\d+", out)
    if not match:
        raise AssetsError(f"{binary}: cannot read a version from {out.strip()!r}")
    return int(match.group(1)), int(match.group(2))


def accepts_flag(binary: Path, flag: str) -> bool:
    """Whether the binary parses ``flag`` (unknown flags fail before --version prints)."""
    return subprocess.run([binary, flag, "--version"], capture_output=True, timeout=30).returncode == 0


def versioned_flags(binary: Path) -> list[str]:
    return [flag for name, flag in VERSIONED_FLAGS if name == binary.name and accepts_flag(binary, flag)]


@dataclass
class Process:
    """One child process with its log file; :meth:`stop` ends it and everything in its session."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(STOP_TIMEOUT_S)


def spawn(name: str, argv: list[str], workdir: Path) -> Process:
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        popen = subprocess.Popen(  # noqa: S603 - a binary from KUBEBUILDER_ASSETS, arguments built here
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=workdir, start_new_session=True
        )
    return Process(name, popen, log)


def service_account_key(workdir: Path) -> tuple[Path, Path]:
    """An RSA key pair for signing service-account tokens (1.20+ refuses to start without one)."""
    key, pub = workdir / "sa.key", workdir / "sa.pub"
    subprocess.run(["openssl", "genrsa", "-out", key, "2048"], check=True, capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", key, "-pubout", "-out", pub], check=True, capture_output=True)
    return key, pub


@dataclass
class ApiServer:
    """etcd and kube-apiserver on loopback; see the module docstring."""

    assets: Path
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="kube-apiserver-")))
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    processes: list[Process] = field(default_factory=list)
    server: str = ""
    etcd_url: str = ""
    version: tuple[int, int] = (0, 0)
    extra_flags: list[str] = field(
        default_factory=list
    )  # more kube-apiserver flags, e.g. --etcd-compaction-interval=1s
    _owns_workdir: bool = True

    @classmethod
    def from_env(cls) -> ApiServer:
        assets = assets_dir()
        if assets is None:
            raise AssetsError(f"{ASSETS_ENV} is unset: run `export {ASSETS_ENV}=$(scripts/kube-assets.sh)`")
        return cls(assets)

    @property
    def kubeconfig(self) -> str:
        return str(self.workdir / "kubeconfig")

    @property
    def ca_file(self) -> Path:
        return self.workdir / "certs" / "apiserver.crt"

    def __enter__(self) -> ApiServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- start / stop -----------------------------------------------------------------------------------

    def start(self) -> None:
        apiserver = find_binary(self.assets, "kube-apiserver")
        etcd = find_binary(self.assets, "etcd")
        self.version = binary_version(apiserver)
        try:
            self._start_etcd(etcd)
            self._start_apiserver(apiserver)
            self._write_kubeconfig()
            self.wait_for(self._ready, START_TIMEOUT_S, "kube-apiserver to answer /readyz", self.processes[-1])
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stops every process (the last started first) and removes the temporary directory."""
        for proc in reversed(self.processes):
            proc.stop()
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def pids(self) -> list[int]:
        return [p.popen.pid for p in self.processes]

    def _start_etcd(self, etcd: Path) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        argv = [
            str(etcd),
            "--name=test",
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=test=http://127.0.0.1:{peer}",
            "--listen-metrics-urls=",
        ]
        if accepts_flag(etcd, "--unsafe-no-fsync"):  # etcd 3.5+: a test store need not survive a power cut
            argv.append("--unsafe-no-fsync")
        proc = spawn("etcd", argv, self.workdir)
        self.processes.append(proc)
        self.wait_for(lambda: _http_ok(f"{self.etcd_url}/health"), START_TIMEOUT_S, "etcd to answer /health", proc)

    def _start_apiserver(self, binary: Path) -> None:
        port = free_port()
        self.server = f"https://127.0.0.1:{port}"
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f'{self.token},admin,admin-uid,"system:masters"\n')
        sa_key, sa_pub = service_account_key(self.workdir)
        argv = [
            str(binary),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'certs'}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=AlwaysAllow",
            "--anonymous-auth=false",
            f"--service-account-key-file={sa_pub}",
            f"--service-account-signing-key-file={sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.0.0.0/24",
            # the `kubernetes` Service's endpoint would be 127.0.0.1, which the reconciler refuses
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true",
            *versioned_flags(binary),
            *self.extra_flags,
        ]
        self.processes.append(spawn("kube-apiserver", argv, self.workdir))

    def start_controller_manager(self) -> Process:
        """kube-controller-manager (CONTROLLERS) against this server, once; returns its process."""
        for proc in self.processes:
            if proc.name == "kube-controller-manager":
                return proc
        binary = find_binary(self.assets, "kube-controller-manager")
        port = free_port()
        argv = [
            str(binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--controllers={CONTROLLERS}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'kcm-certs'}",
            f"--service-account-private-key-file={self.workdir / 'sa.key'}",
            "--use-service-account-credentials=false",
            *versioned_flags(binary),
        ]
        proc = spawn("kube-controller-manager", argv, self.workdir)
        self.processes.append(proc)
        healthz = f"https://127.0.0.1:{port}/healthz"
        self.wait_for(lambda: _http_ok(healthz, verify=False), START_TIMEOUT_S, "kube-controller-manager", proc)
        return proc

    def _ready(self) -> bool:
        status, _ = self.request("GET", "/readyz", check=False)
        if status == 404:  # a release without /readyz
            status, _ = self.request("GET", "/healthz", check=False)
        return status == 200

    def _write_kubeconfig(self) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "test", "cluster": {"server": self.server, "certificate-authority": str(self.ca_file)}}
            ],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}],
            "current-context": "test",
        }
        Path(self.kubeconfig).write_text(yaml.safe_dump(config))

    def kubeconfig_for(self, server: str, ca_file: str) -> str:
        """This kubeconfig's text with another server address / CA path (for a kubeconfig mounted elsewhere)."""
        config = yaml.safe_load(Path(self.kubeconfig).read_text())
        config["clusters"][0]["cluster"] = {"server": server, "certificate-authority": ca_file}
        return str(yaml.safe_dump(config))

    # --- waiting ----------------------------------------------------------------------------------------

    def wait_for(
        self, condition: Callable[[], object], timeout: float, what: str, process: Process | None = None
    ) -> Any:
        """Polls ``condition`` until it returns something truthy (returned); raises naming ``what`` otherwise.

        Given ``process``, fails at once if it exits, with the tail of its log."""
        deadline = time.monotonic() + timeout
        while True:
            if process is not None and not process.alive():
                raise StartError(f"{process.name} exited ({process.popen.returncode}):\n{process.log_tail()}")
            with contextlib.suppress(OSError, ssl.SSLError):
                result = condition()
                if result:
                    return result
            if time.monotonic() > deadline:
                tail = f"\n{process.name} log:\n{process.log_tail()}" if process else ""
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}{tail}")
            time.sleep(0.1)

    # --- requests ---------------------------------------------------------------------------------------

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        content_type: str = "application/json",
        check: bool = True,
    ) -> tuple[int, Any]:
        """One HTTP request with the token; returns (status, parsed JSON or text). ``check`` raises on >= 400."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ssl_context(), timeout=30) as resp:  # noqa: S310
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        parsed = _parse(raw)
        if check and status >= 400:
            raise RuntimeError(f"{method} {path}: HTTP {status}: {parsed}")
        return status, parsed

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` from the kubeconfig (the caller closes it)."""
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
        return client.ApiClient(cfg)

    def resource_path(self, api_version: str, kind: str, namespace: str = "", name: str = "") -> str:
        """The REST path of a kind (found through discovery), optionally of one object."""
        group_path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        _, listing = self.request("GET", group_path)
        for res in listing["resources"]:
            if res["kind"] == kind and "/" not in res["name"]:
                ns = f"/namespaces/{namespace}" if res["namespaced"] and namespace else ""
                return f"{group_path}{ns}/{res['name']}" + (f"/{name}" if name else "")
        raise KeyError(f"{api_version} {kind}: not served by {self.server}")

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        status, obj = self.request("GET", self.resource_path(api_version, kind, namespace, name), check=False)
        if status == 404:
            return None
        if status >= 400:
            raise RuntimeError(f"GET {kind} {namespace}/{name}: HTTP {status}: {obj}")
        return dict(obj)

    def apply(self, obj: dict[str, Any], namespace: str = "", field_manager: str = FIELD_MANAGER) -> dict[str, Any]:
        """Server-side apply of one object (``kubectl apply --server-side --force-conflicts``)."""
        meta = obj["metadata"]
        ns = meta.get("namespace", namespace)
        path = self.resource_path(obj["apiVersion"], obj["kind"], ns, meta["name"])
        query = f"?fieldManager={field_manager}&force=true"
        _, out = self.request("PATCH", path + query, obj, content_type="application/apply-patch+yaml")
        return dict(out)

    def apply_file(self, path: str | Path, namespace: str = "") -> list[dict[str, Any]]:
        """Applies every document of a YAML file; CRDs are waited on until Established."""
        docs = [d for d in yaml.safe_load_all(Path(path).read_text()) if d]
        applied = [self.apply(doc, namespace) for doc in docs]
        for doc in applied:
            if doc["kind"] == "CustomResourceDefinition":
                self.wait_crd_established(doc["metadata"]["name"])
        return applied

    def wait_crd_established(self, name: str, timeout: float = 30) -> None:
        def established() -> bool:
            crd = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) or {}
            conditions = crd.get("status", {}).get("conditions", [])
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        self.wait_for(established, timeout, f"CRD {name} to be Established")

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str = "", propagation: str = "Background"
    ) -> int:
        path = self.resource_path(api_version, kind, namespace, name)
        status, _ = self.request("DELETE", path, {"propagationPolicy": propagation}, check=False)
        return status

    def create_namespace(self, prefix: str = "test") -> str:
        name = f"{prefix}-{secrets.token_hex(4)}"
        self.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
        return name


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")


def _http_ok(url: str, verify: bool = True) -> bool:
    context = None
    if url.startswith("https") and not verify:
        context = ssl._create_unverified_context()  # noqa: S323 - a test process's self-signed loopback endpoint
    with urllib.request.urlopen(url, timeout=2, context=context) as resp:  # noqa: S310
        return bool(resp.status == 200)


def alive_pids(pids: Iterable[int]) -> list[int]:
    """Those of ``pids`` that still name a running (not zombie) process."""
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive
