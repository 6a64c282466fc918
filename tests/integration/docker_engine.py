"""A Docker engine and the project's images for the image tests (test_images.py).

The engine is whatever ``scripts/build-images.sh --engine`` finds or starts (the one DOCKER_HOST or the default
socket names; else, as root, Debian's dockerd with its own data root, ``--bridge=none --iptables=false``). Exit
status 3 from the script means no engine can be had here: the tests skip with the script's reason. An engine this
session started is stopped at its end unless another session still uses it (each user holds a shared lock on a
file beside the socket; the last one out stops it).

Images are built by ``scripts/build-images.sh NAME`` (layers cached by the engine, so a rebuild after no change
takes seconds). Containers run detached, read-only, on the host network, as the image's own (non-root) user, with
all capabilities dropped, and are removed by :meth:`Container.remove`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build-images.sh"
NO_ENGINE_EXIT = 3
TAGS = {
    "daemon": "kserve-compile:0.1.0",
    "server": "ghcr.io/kserve-compile/onnxserver:latest",
    "router": "ghcr.io/kserve-compile/router:latest",
}
# (image, what, value) figures the tests measured, printed at the end of the session (conftest.py)
FIGURES: list[tuple[str, str, str]] = []


class NoEngine(Exception):
    """No Docker engine can be used or started here; the message says why."""


@dataclass
class Engine:
    host: str
    started: bool
    _users: IO[str] | None = None
    built: dict[str, str] = field(default_factory=dict)  # name -> image ID

    @classmethod
    def start(cls) -> Engine:
        result = subprocess.run([SCRIPT, "--engine"], capture_output=True, text=True, timeout=600)
        if result.returncode == NO_ENGINE_EXIT:
            raise NoEngine(result.stderr.strip().replace("build-images: ", ""))
        if result.returncode != 0:
            raise RuntimeError(f"{SCRIPT} --engine failed ({result.returncode}):\n{result.stderr}")
        host, state = result.stdout.split()
        engine = cls(host, state == "started")
        engine._hold()
        return engine

    def _hold(self) -> None:
        if self.host.startswith("unix://"):
            self._users = open(self.host.removeprefix("unix://") + ".users", "a")  # noqa: SIM115 - held all session
            fcntl.flock(self._users, fcntl.LOCK_SH)

    def release(self) -> None:
        """Stops the engine if this session started it and no other session holds it."""
        if self._users is None:
            return
        fcntl.flock(self._users, fcntl.LOCK_UN)
        last = True
        try:
            fcntl.flock(self._users, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            last = False
        if self.started and last:
            subprocess.run([SCRIPT, "--stop-engine"], capture_output=True, timeout=120, check=False)
        self._users.close()
        self._users = None

    def env(self) -> dict[str, str]:
        return {**os.environ, "DOCKER_HOST": self.host}

    def docker(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, env=self.env())
        if check and result.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args[:3])} ... failed ({result.returncode}): {result.stderr.strip()}")
        return result

    def image(self, name: str) -> str:
        """The ID of the image built (once per session) by scripts/build-images.sh; a failed build raises.

        By ID, not tag: another checkout building the same tags at the same time cannot swap them."""
        if name not in self.built:
            t0 = time.monotonic()
            with tempfile.TemporaryDirectory() as iids:
                env = {**self.env(), "IIDFILE_DIR": iids}
                result = subprocess.run([SCRIPT, name], capture_output=True, text=True, timeout=3600, env=env)
                if result.returncode != 0:
                    raise RuntimeError(f"{SCRIPT} {name} failed ({result.returncode}):\n{result.stderr[-4000:]}")
                self.built[name] = Path(iids, f"{name}.iid").read_text().strip()
            FIGURES.append((TAGS[name], "build (cached layers count)", f"{time.monotonic() - t0:.0f} s"))
            FIGURES.append((TAGS[name], "size", f"{self.image_size(self.built[name]) / 1e6:.0f} MB"))
        return self.built[name]

    def image_size(self, tag: str) -> int:
        return int(self.docker("image", "inspect", "-f", "{{.Size}}", tag).stdout)

    def image_config(self, tag: str) -> dict[str, Any]:
        return dict(json.loads(self.docker("image", "inspect", "-f", "{{json .Config}}", tag).stdout))

    def run(
        self, tag: str, *args: str, mounts: dict[str, str] | None = None, env: dict[str, str] | None = None
    ) -> Container:
        """Starts a container: read-only root, /tmp a tmpfs, host network, no capabilities, the image's user."""
        argv = ["run", "-d", "--read-only", "--tmpfs", "/tmp", "--network", "host", "--cap-drop", "ALL"]
        argv += ["--security-opt", "no-new-privileges"]
        for host_path, container_path in (mounts or {}).items():
            argv += ["-v", f"{host_path}:{container_path}:ro"]
        for key, value in (env or {}).items():
            argv += ["-e", f"{key}={value}"]
        started = time.monotonic()
        cid = self.docker(*argv, tag, *args).stdout.strip()
        return Container(self, cid, self.tag_of(tag), started)

    def tag_of(self, image: str) -> str:
        """The tag an image ID was built as (for messages and figures)."""
        return next((TAGS[name] for name, iid in self.built.items() if iid == image), image)


@dataclass
class Container:
    engine: Engine
    id: str
    tag: str
    started: float

    def running(self) -> bool:
        out = self.engine.docker("inspect", "-f", "{{.State.Running}}", self.id, check=False).stdout.strip()
        return out == "true"

    def logs(self) -> str:
        result = self.engine.docker("logs", self.id, check=False)
        return (result.stdout + result.stderr)[-4000:]

    def exec(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return self.engine.docker("exec", self.id, *argv, check=False)

    def process_uid(self) -> int:
        """The real uid of the container's main process (from /proc/1/status inside it)."""
        status = self.exec("cat", "/proc/1/status").stdout
        line = next(ln for ln in status.splitlines() if ln.startswith("Uid:"))
        return int(line.split()[1])

    def wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> float:
        """Polls until ``condition`` holds; returns seconds since the container was started. Fails with its log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise AssertionError(f"{self.tag} exited while waiting for {what}:\n{self.logs()}")
            with contextlib.suppress(OSError, ValueError):
                if condition():
                    return time.monotonic() - self.started
            time.sleep(0.05)
        raise AssertionError(f"{self.tag}: timed out after {timeout:.0f} s waiting for {what}:\n{self.logs()}")

    def remove(self) -> None:
        self.engine.docker("rm", "-f", self.id, check=False)


def http(url: str, body: bytes | None = None, timeout: float = 10) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - loopback test endpoint
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
