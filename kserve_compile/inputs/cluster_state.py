"""The live objects KServe's pod webhook reads, handed to kserve-compile as input documents.

The webhook looks up the pod's ServiceAccount and the Secrets it lists (storage credentials), the storage-spec
Secret, and every ClusterStorageContainer. Offline these come from the input manifests; what is missing is reported
as a warning by the injectors rather than guessed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .. import constants as C
from ..errors import InputError

Key = tuple[str, str]  # (namespace, name)


def _frozen(mapping: Mapping[Key, dict[str, Any]] | None) -> Mapping[Key, dict[str, Any]]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, eq=False)
class ClusterState:
    service_accounts: Mapping[Key, dict[str, Any]] = field(default_factory=lambda: _frozen(None))
    secrets: Mapping[Key, dict[str, Any]] = field(default_factory=lambda: _frozen(None))
    # ClusterStorageContainers in the order the API server lists them (by name).
    storage_containers: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "service_accounts", _frozen(self.service_accounts))
        object.__setattr__(self, "secrets", _frozen(self.secrets))
        ordered = sorted(self.storage_containers, key=lambda csc: str((csc.get("metadata") or {}).get("name", "")))
        object.__setattr__(self, "storage_containers", tuple(ordered))

    @classmethod
    def from_manifests(
        cls, documents: Iterable[Mapping[str, Any] | None], *, default_namespace: str = "default"
    ) -> ClusterState:
        """Pick ServiceAccounts, Secrets and ClusterStorageContainers out of parsed manifests; ignore the rest."""
        service_accounts: dict[Key, dict[str, Any]] = {}
        secrets: dict[Key, dict[str, Any]] = {}
        storage_containers: list[dict[str, Any]] = []
        for doc in documents:
            if not isinstance(doc, Mapping):
                continue
            kind = doc.get("kind")
            meta = doc.get("metadata") or {}
            name = meta.get("name") if isinstance(meta, Mapping) else None
            if kind not in ("ServiceAccount", "Secret", C.KIND_CSC):
                continue
            if not isinstance(name, str) or not name:
                raise InputError(f"{kind} without metadata.name", "metadata.name")
            if kind == C.KIND_CSC:
                storage_containers.append(dict(doc))
                continue
            key = (str(meta.get("namespace") or default_namespace), name)
            if kind == "ServiceAccount":
                service_accounts[key] = dict(doc)
            else:
                secret_data(doc)  # reject undecodable data early, naming the Secret
                secrets[key] = dict(doc)
        return cls(service_accounts, secrets, tuple(storage_containers))

    def service_account(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.service_accounts.get((namespace, name))

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.secrets.get((namespace, name))


def secret_data(secret: Mapping[str, Any]) -> dict[str, bytes]:
    """A Secret's keys and decoded values, as the API server serves them (``stringData`` folded into ``data``)."""
    out: dict[str, bytes] = {}
    name = (secret.get("metadata") or {}).get("name", "")
    for key, value in (secret.get("data") or {}).items():
        try:
            out[str(key)] = base64.b64decode(str(value or ""), validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"Secret {name}: data.{key} is not valid base64", f"data.{key}") from None
    for key, value in (secret.get("stringData") or {}).items():
        out[str(key)] = str(value or "").encode()
    return out
