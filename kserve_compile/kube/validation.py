"""KServe's checks on plain Kubernetes data that both admission webhooks make (the InferenceService's and the
ServingRuntime's): blocked environment variables (``pkg/validation/env_policy.go`` ``ValidateBlockedEnvVars``) and
GPU resource names (``pkg/utils/utils.go`` ``UpdateGPUResourceTypeListByAnnotation``, ``HasUnknownGpuResourceType``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .. import constants as C
from ..errors import go_quote

BLOCKED_ENV_VARS = ("PYTHONPATH",)  # pkg/validation/env_policy.go DefaultBlockedEnvVars
BASIC_RESOURCES = ("cpu", "memory", "storage", "ephemeral-storage")


def container_env(container: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [e for e in container.get("env") or [] if isinstance(e, Mapping)]


def blocked_env_problem(
    containers: Sequence[Mapping[str, Any]], base: str, *, single: bool = False
) -> tuple[str, str] | None:
    """``ValidateBlockedEnvVars``: the first blocked variable as (message, path); ``single`` = ``base`` is the container."""
    for index, container in enumerate(containers):
        for env_index, env in enumerate(container_env(container)):
            if env.get("name") in BLOCKED_ENV_VARS:
                where = base if single else f"{base}[{index}]"
                message = f"setting {env.get('name')} in container {go_quote(str(container.get('name') or ''))} is not allowed for security reasons"
                return message, f"{where}.env[{env_index}]"
    return None


def known_gpu_types(annotations: Mapping[str, str], configured: Sequence[str]) -> list[str] | str:
    """``UpdateGPUResourceTypeListByAnnotation``: the GPU resource names, or KServe's error text for a bad annotation."""
    types = list(configured)
    text = annotations.get(C.ANN_GPU_RESOURCE_TYPES, "")
    if text:
        try:
            custom = json.loads(text)
        except ValueError:
            custom = None
        if not isinstance(custom, list) or not custom or not all(isinstance(t, str) and t for t in custom):
            return f"invalid GPU format({text}) for {C.ANN_GPU_RESOURCE_TYPES} annotation: must be a valid JSON array"
        types += [t for t in custom if t not in types]
    return types


def unknown_gpu_resource(resources: Any, gpu_types: Sequence[str]) -> str | None:
    """``HasUnknownGpuResourceType``: the first resource name that is neither basic nor a known GPU type."""
    if not isinstance(resources, Mapping):
        return None
    for section in ("limits", "requests"):
        for name in resources.get(section) or {}:
            if name not in BASIC_RESOURCES and name not in gpu_types:
                return f"{section}[{name}]"
    return None
