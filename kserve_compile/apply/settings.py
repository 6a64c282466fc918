"""The daemon's settings (``kserve-compile daemon`` flags), and the Lease name of a shard."""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field

from kserve_compile import constants as C

__all__ = ["DaemonConfig", "shard_lease_name"]


def shard_lease_name(namespaces: Sequence[str], selector: str, base: str = C.DAEMON_LEASE_NAME) -> str:
    """One Lease per shard: the base name for the whole cluster, a stable suffix for a namespace/selector shard."""
    if not namespaces and not selector:
        return base
    digest = hashlib.sha256(f"{','.join(sorted(namespaces))}|{selector}".encode()).hexdigest()[:10]
    return f"{base}-{digest}"


@dataclass
class DaemonConfig:
    namespaces: tuple[str, ...] = ()  # () = all namespaces
    selector: str = ""  # label selector on InferenceServices and InferenceGraphs
    config_namespace: str = C.KSERVE_NAMESPACE
    leader_elect: bool = True
    lease_namespace: str = C.KSERVE_NAMESPACE
    lease_name: str = ""  # "" = shard_lease_name(namespaces, selector)
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.urandom(3).hex()}")
    lease_seconds: float = 15.0
    renew_seconds: float = 10.0
    retry_seconds: float = 2.0
    resync_seconds: float = 600.0
    watch_timeout: int = 300
    watch_read_timeout: float | None = None  # None = watch_timeout + 30 s
    not_ready_after: float = 60.0  # an informer failing this long fails /readyz
    dead_after: float = 300.0  # ... and this long fails /healthz (the kubelet restarts the pod)
    retry_base: float = 0.5
    retry_max: float = 300.0
    backoff_max: float = 30.0
    workers: int = 4  # concurrent reconciles; the queue never hands one key to two workers
    pod_webhook: str = "inline"  # --pod-webhook: "cluster" leaves what KServe's pod webhook adds to the cluster's

    def __post_init__(self) -> None:
        self.lease_name = self.lease_name or shard_lease_name(self.namespaces, self.selector)
