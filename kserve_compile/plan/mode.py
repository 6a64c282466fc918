"""Plan, step 3 — resolve the deployment mode (``GetDeploymentMode``, ``ctl/utils/utils.go:224-248``)."""

from __future__ import annotations

from collections.abc import Mapping

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig


def resolve_mode(annotations: Mapping[str, str], status_mode: str | None, config: KServeConfig) -> str:
    """status.deploymentMode, else the annotation (legacy names mapped, unknown values ignored), else the ConfigMap."""
    if status_mode is not None:
        return C.LEGACY_MODES.get(status_mode, status_mode) or C.MODE_STANDARD
    value = annotations.get(C.ANN_DEPLOYMENT_MODE)
    if value is not None:
        value = C.LEGACY_MODES.get(value, value)
        if value in C.DEPLOYMENT_MODES:
            return value
    mode = config.deploy.default_deployment_mode
    if not mode:
        raise InputError(
            'the inferenceservice-config ConfigMap has no "deploy" key, so KServe cannot resolve a deployment mode '
            f'(its ingress factory fails with "unsupported deployment mode for ingress: "); set the annotation '
            f"{C.ANN_DEPLOYMENT_MODE} or the deploy key",
            f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]",
        )
    return mode


def legacy_warning(annotations: Mapping[str, str]) -> str | None:
    value = annotations.get(C.ANN_DEPLOYMENT_MODE)
    if value in C.LEGACY_MODES:
        return f'deployment mode "{value}" is deprecated; use "{C.LEGACY_MODES[value]}"'
    return None
