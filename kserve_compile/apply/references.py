"""Which ServiceAccounts and Secrets an InferenceService's storage credentials come from.

Mirrors the lookups of KServe's storage-initializer injector (``pkg/credentials/service_account_credentials.go``
and ``pkg/webhook/admission/pod/storage_initializer_injector.go``): the component's ServiceAccount
(``default`` when unnamed), the Secrets that ServiceAccount lists, the Secret named by the
``storageSecretName`` annotation, and the storage-spec Secret (``storage-config`` unless configured).
The daemon reads exactly these and hands them to the renderer with the isvc, as an offline render gets them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply.objects import Obj


def credential_settings(configmap: Obj | None) -> dict[str, str]:
    """``storageSpecSecretName`` and ``storageSecretNameAnnotation`` from the ConfigMap's ``credentials`` key."""
    raw = ((configmap or {}).get("data") or {}).get("credentials") or "{}"
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = {}
    parsed = parsed if isinstance(parsed, dict) else {}
    return {
        "spec_secret": str(parsed.get("storageSpecSecretName") or C.DEFAULT_STORAGE_SPEC_SECRET),
        "annotation": str(parsed.get("storageSecretNameAnnotation") or C.ANN_STORAGE_SECRET_NAME),
    }


def service_account_names(isvc: Obj) -> list[str]:
    spec = isvc.get("spec") or {}
    names = {str((spec.get(c) or {}).get("serviceAccountName") or "default") for c in C.COMPONENTS if spec.get(c)}
    return sorted(names or {"default"})


def secret_names(isvc: Obj, accounts: list[Obj], configmap: Obj | None) -> list[str]:
    settings = credential_settings(configmap)
    names = {settings["spec_secret"]}
    annotations = (isvc.get("metadata") or {}).get("annotations") or {}
    if annotations.get(settings["annotation"]):
        names.add(str(annotations[settings["annotation"]]))
    for sa in accounts:
        names.update(str(ref["name"]) for ref in sa.get("secrets") or [] if isinstance(ref, dict) and ref.get("name"))
    return sorted(names)


def credential_inputs(
    isvc: Obj,
    configmap: Obj | None,
    account: Callable[[str, str], Obj | None],
    secret: Callable[[str, str], Obj | None],
) -> list[dict[str, Any]]:
    """The ServiceAccounts and Secrets (those that exist) the render of ``isvc`` reads, in a stable order."""
    ns = str((isvc.get("metadata") or {}).get("namespace", ""))
    accounts = [sa for sa in (account(ns, n) for n in service_account_names(isvc)) if sa is not None]
    secrets = [s for s in (secret(ns, n) for n in secret_names(isvc, accounts, configmap)) if s is not None]
    return [*accounts, *secrets]
