"""LoRA adapters on the model server: ``pkg/controller/v1alpha2/llmisvc/workload_lora.go``.

``enumerateLoRAAdapters`` (sorted by name, mount paths under ``/mnt/lora``, the schemes KServe accepts, with its
messages), ``attachLoRAAdapters`` (``pvc://`` adapters mounted read-only; ``--enable-lora``, the rank/adapter
limits and ``--lora-modules`` with each adapter under its own and its ``publishers/<ns>/models/<name>`` name,
prepended to ``main``'s args unless the container already passes ``--lora-modules``). ``hf://`` and ``s3://``
adapters are downloaded by the storage-initializer with the base model (``storage.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..render.pod_webhook.storage import ModelMount, add_model_mount, parse_pvc_uri
from .llm_types import Spec, get_path
from .names import child_name

MOUNT_ROOT = "/mnt/lora"
DOCS = "https://github.com/kserve/kserve/blob/master/docs/samples/llmisvc/lora-adapters/README.md"
_PATH_INVALID = re.compile(r"[^a-zA-Z0-9._-]")


@dataclass(frozen=True)
class Adapter:
    name: str
    mount_path: str
    uri: str
    scheme: str  # "hf", "s3" or "pvc"


def _segment(name: str) -> str:
    out = _PATH_INVALID.sub("-", name)
    return "adapter" if out in ("", ".", "..") else out


def enumerate_adapters(spec: Spec) -> list[Adapter]:
    """``enumerateLoRAAdapters``; ``InputError`` with KServe's message for a URI it refuses."""
    adapters = get_path(spec, "model", "lora", "adapters") or []
    disabled = get_path(spec, "storageInitializer", "enabled") is False
    out = []
    for adapter in sorted((a for a in adapters if isinstance(a, dict)), key=lambda a: str(a.get("name") or "")):
        name, uri = str(adapter.get("name") or ""), str(adapter.get("uri") or "")
        scheme, sep, _ = uri.partition("://")
        path = "spec.model.lora.adapters"
        if not sep:
            raise InputError(f'LoRA adapter "{name}": invalid URI "{uri}"', path)
        if scheme in ("hf", "s3") and disabled:
            raise InputError(f'LoRA adapter "{name}": hf:// and s3:// require the storage initializer — set '
                             f"storageInitializer.enabled to true (see {DOCS})", path)  # fmt: skip
        if scheme == "pvc" and disabled:
            raise InputError(f'LoRA adapter "{name}": pvc:// requires a mounted volume — do not set storageInitializer.enabled '
                             f"to false (see {DOCS})", path)  # fmt: skip
        if scheme == "oci":
            raise InputError(f'LoRA adapter "{name}": oci:// is not supported for LoRA adapters; use hf://, s3://, or pvc:// '
                             f"instead (see {DOCS})", path)  # fmt: skip
        if scheme not in ("hf", "s3", "pvc"):
            raise InputError(f'LoRA adapter "{name}": unsupported URI scheme "{scheme}://"; supported schemes are hf://, s3://, '
                             f"pvc:// (see {DOCS})", path)  # fmt: skip
        out.append(Adapter(name, f"{MOUNT_ROOT}/{_segment(name)}", uri, scheme))
    return out


def download_pairs(adapters: list[Adapter]) -> list[tuple[str, str]]:
    """``collectLoRADownloadPairs``: (uri, path) of the adapters the storage-initializer downloads."""
    return [(a.uri, a.mount_path) for a in adapters if a.scheme in ("hf", "s3")]


def _user_supplied(main: dict[str, Any]) -> bool:
    for env in main.get("env") or []:
        if env.get("name") == "VLLM_ADDITIONAL_ARGS" and "--lora-modules" in str(env.get("value") or ""):
            return True
    return "--lora-modules" in " ".join(main.get("command") or []) + " " + " ".join(main.get("args") or [])


def attach_adapters(pod: dict[str, Any], spec: Spec, namespace: str, adapters: list[Adapter]) -> None:
    """``attachLoRAAdapters``."""
    if not adapters:
        return
    modules: list[str] = []
    for a in adapters:
        if a.scheme == "pvc":
            claim, sub_path = parse_pvc_uri(a.uri)
            add_model_mount(
                ModelMount(a.mount_path, child_name("lora-pvc-", a.name), True, sub_path, claim), "main", pod
            )
        for module_name in (a.name, f"publishers/{namespace}/models/{a.name}"):
            modules.append(json.dumps({"name": module_name, "path": a.mount_path}, separators=(",", ":")))
    main = next((c for c in pod.get("containers") or [] if c.get("name") == "main"), None)
    if main is None:
        raise InputError('no container "main" in pod spec for LoRA injection', "spec.template.containers")
    if _user_supplied(main):
        return
    lora = get_path(spec, "model", "lora") or {}
    argv = ["--enable-lora"]
    for key, flag in (
        ("maxRank", "--max-lora-rank"),
        ("maxAdapters", "--max-loras"),
        ("maxCpuAdapters", "--max-cpu-loras"),
    ):
        if lora.get(key) is not None:
            argv.append(f"{flag}={lora[key]}")
    argv += ["--lora-modules", *(f"'{m}'" for m in modules)]
    main["args"] = argv + list(main.get("args") or [])


__all__ = ["Adapter", "C", "attach_adapters", "download_pairs", "enumerate_adapters"]
