"""Storage credentials KServe injects into the storage initializer / agent (``pkg/credentials``).

Two sources: the pod's ServiceAccount (IRSA annotation, then the Secret named by the
``serving.kserve.io/storageSecretName`` annotation or every Secret the ServiceAccount lists), and — for an isvc
``storage`` spec — the ``storage-config`` Secret. The helpers here change the container and volume list they are
given; the public injectors hand them copies.

Offline the objects come from :class:`ClusterState`. Where KServe would read an object that is not in the inputs,
we add a warning and inject nothing for it (KServe fails the Pod for a missing listed Secret; a missing input file is
far more likely than a missing cluster object, so we do not turn it into an error).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ... import constants as C
from ...errors import InputError
from ...inputs.cluster_state import ClusterState, secret_data
from ...inputs.config import CredentialConfig, S3Config

# S3 (pkg/credentials/s3)
AWS_ACCESS_KEY_ID = "AWS_ACCESS_KEY_ID"
AWS_SECRET_ACCESS_KEY = "AWS_SECRET_ACCESS_KEY"
DEFAULT_S3_ACCESS_KEY_ID_NAME = "awsAccessKeyID"
DEFAULT_S3_SECRET_ACCESS_KEY_NAME = "awsSecretAccessKey"
AWS_CA_BUNDLE = "AWS_CA_BUNDLE"
AWS_CA_BUNDLE_CONFIGMAP = "AWS_CA_BUNDLE_CONFIGMAP"
_S3_ANN = C.SERVING_GROUP + "/s3-"
# (annotation suffix, secret data key / env name, S3Config attribute), in KServe's emission order after the endpoint.
_S3_SETTINGS = (
    ("verifyssl", "S3_VERIFY_SSL", "verify_ssl"),
    ("useanoncredential", "awsAnonymousCredential", "use_anonymous_credential"),
    ("region", "AWS_DEFAULT_REGION", "region"),
    ("usevirtualbucket", "S3_USER_VIRTUAL_BUCKET", "use_virtual_bucket"),
    ("useaccelerate", "S3_USE_ACCELERATE", "use_accelerate"),
    ("cabundle", AWS_CA_BUNDLE, "ca_bundle"),
    ("cabundle-configmap", AWS_CA_BUNDLE_CONFIGMAP, "ca_bundle_config_map"),
)

# GCS, HDFS, Azure, HTTPS, Hugging Face, ModelScope
GCS_DEFAULT_CREDENTIAL_FILE = "gcloud-application-credentials.json"
GCS_VOLUME = "user-gcp-sa"
GCS_MOUNT_PATH = "/var/secrets/"
GCS_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
HDFS_NAMENODE = "HDFS_NAMENODE"
HDFS_VOLUME = "hdfs-secrets"
HDFS_MOUNT_PATH = "/var/secrets/kserve-hdfscreds"
AZURE_LEGACY_CLIENT_ID = "AZ_CLIENT_ID"
AZURE_CLIENT_ID = "AZURE_CLIENT_ID"
AZURE_ACCESS_TOKEN = "AZURE_ACCESS_TOKEN"
AZURE_STORAGE_ACCESS_KEY = "AZURE_STORAGE_ACCESS_KEY"
_AZURE_ENV_KEYS = (
    "AZURE_SUBSCRIPTION_ID",
    "AZURE_TENANT_ID",
    AZURE_CLIENT_ID,
    "AZURE_CLIENT_SECRET",
    AZURE_STORAGE_ACCESS_KEY,
    AZURE_ACCESS_TOKEN,
    "AZURE_ACCESS_EXPIRES_ON_SECONDS",
    "AZURE_ACCOUNT_NAME",
    "AZURE_SERVICE_URL",
)
_AZURE_LEGACY = {
    "AZURE_SUBSCRIPTION_ID": "AZ_SUBSCRIPTION_ID",
    "AZURE_TENANT_ID": "AZ_TENANT_ID",
    AZURE_CLIENT_ID: AZURE_LEGACY_CLIENT_ID,
    "AZURE_CLIENT_SECRET": "AZ_CLIENT_SECRET",
}
# Keys KServe leaves out when the Secret lacks them; the others (tenant id, legacy names) are always referenced.
_AZURE_OPTIONAL = frozenset(
    {
        AZURE_CLIENT_ID,
        "AZURE_CLIENT_SECRET",
        "AZURE_SUBSCRIPTION_ID",
        AZURE_STORAGE_ACCESS_KEY,
        AZURE_ACCESS_TOKEN,
        "AZURE_ACCESS_EXPIRES_ON_SECONDS",
        "AZURE_ACCOUNT_NAME",
        "AZURE_SERVICE_URL",
    }
)
HTTPS_HOST = "https-host"
HTTPS_HEADERS = "headers"
HF_TOKEN = "HF_TOKEN"
MS_TOKEN = "MODELSCOPE_API_TOKEN"

# storage spec (pkg/credentials/service_account_credentials.go)
SUPPORTED_STORAGE_SPEC_TYPES = ("s3", "hdfs", "webhdfs")
BUCKET_STORAGE_TYPES = ("s3",)


def secret_ref_env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def merge_envs(base: list[dict[str, Any]], overrides: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``utils.MergeEnvs``: an override with a known name replaces only the *value*; unknown names are appended."""
    extra = []
    for override in overrides:
        for env in base:
            if env.get("name") == override.get("name"):
                if override.get("value"):
                    env["value"] = override["value"]
                else:
                    env.pop("value", None)
                break
        else:
            extra.append(override)
    return base + extra


def append_volume_if_absent(volumes: list[dict[str, Any]], volume: dict[str, Any]) -> None:
    if not any(v.get("name") == volume["name"] for v in volumes):
        volumes.append(volume)


# --- S3 ------------------------------------------------------------------------------------------------------------
def s3_env(annotations: Mapping[str, str], data: Mapping[str, bytes] | None, cfg: S3Config) -> list[dict[str, Any]]:
    """``BuildS3EnvVars``: each setting from the object's annotation, else the Secret's data, else the config."""

    def pick(suffix: str, data_key: str, attr: str) -> str:
        if _S3_ANN + suffix in annotations:
            return str(annotations[_S3_ANN + suffix])
        if data is not None and data_key in data:
            return data[data_key].decode(errors="replace")
        return str(getattr(cfg, attr))

    envs: list[dict[str, Any]] = []
    endpoint = pick("endpoint", "S3_ENDPOINT", "endpoint")
    if endpoint:
        endpoint = endpoint.strip()
        lowered = endpoint.lower()
        if lowered.startswith("https://"):
            use_https, host, url = "1", endpoint[8:], endpoint
        elif lowered.startswith("http://"):
            use_https, host, url = "0", endpoint[7:], endpoint
        else:
            use_https = pick("usehttps", "S3_USE_HTTPS", "use_https")
            host = endpoint
            url = ("http://" if use_https == "0" else "https://") + endpoint
        if use_https:
            envs.append({"name": "S3_USE_HTTPS", "value": use_https})
        envs.append({"name": "S3_ENDPOINT", "value": host})
        envs.append({"name": "AWS_ENDPOINT_URL", "value": url})
    for suffix, data_key, attr in _S3_SETTINGS:
        value = pick(suffix, data_key, attr)
        if value:
            envs.append({"name": data_key, "value": value})
    return envs


def _s3_secret_env(
    secret_name: str, annotations: Mapping[str, str], data: Mapping[str, bytes], cfg: S3Config
) -> list[dict[str, Any]]:
    access_key = cfg.access_key_id_name or DEFAULT_S3_ACCESS_KEY_ID_NAME
    secret_key = cfg.secret_access_key_name or DEFAULT_S3_SECRET_ACCESS_KEY_NAME
    return [
        secret_ref_env(AWS_ACCESS_KEY_ID, secret_name, access_key),
        secret_ref_env(AWS_SECRET_ACCESS_KEY, secret_name, secret_key),
        *s3_env(annotations, data, cfg),
    ]


def _azure_env(secret_name: str, data: Mapping[str, bytes]) -> list[dict[str, Any]]:
    envs = []
    for env_name in _AZURE_ENV_KEYS:
        data_key = env_name
        legacy = _AZURE_LEGACY.get(env_name, "")
        if legacy in data:
            data_key = legacy
        if data_key in data or data_key not in _AZURE_OPTIONAL:
            envs.append(secret_ref_env(env_name, secret_name, data_key))
    return envs


# --- ServiceAccount path -------------------------------------------------------------------------------------------
def add_service_account_credentials(
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
    *,
    namespace: str,
    annotations: Mapping[str, str],
    service_account_name: str,
    config: CredentialConfig,
    cluster: ClusterState,
    warnings: list[str],
) -> None:
    """``CreateSecretVolumeAndEnv``: credentials from the ServiceAccount (default ``default``) and its Secrets."""
    sa_name = service_account_name or "default"
    sa = cluster.service_account(namespace, sa_name)
    if sa is None:
        warnings.append(
            f"ServiceAccount {namespace}/{sa_name} not in the inputs: no storage credentials injected into {container.get('name')}"
        )
        return
    sa_annotations = (sa.get("metadata") or {}).get("annotations") or {}
    if C.ANN_AWS_IRSA_ROLE_ARN in sa_annotations:
        container.setdefault("env", []).extend(s3_env(sa_annotations, None, config.s3))
    secret_annotation = config.storage_secret_name_annotation
    if secret_annotation and secret_annotation in annotations:
        _mount_secret(container, volumes, str(annotations[secret_annotation]), namespace, config, cluster, warnings)
        return
    for ref in sa.get("secrets") or []:
        if isinstance(ref, Mapping) and ref.get("name"):
            _mount_secret(container, volumes, str(ref["name"]), namespace, config, cluster, warnings)


def _mount_secret(
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
    secret_name: str,
    namespace: str,
    config: CredentialConfig,
    cluster: ClusterState,
    warnings: list[str],
) -> None:
    """``mountSecretCredential``: the first matching credential kind wins, checked in KServe's order."""
    secret = cluster.secret(namespace, secret_name)
    if secret is None:
        warnings.append(
            f"Secret {namespace}/{secret_name} not in the inputs: its storage credentials are not injected into {container.get('name')}"
        )
        return
    data = secret_data(secret)
    annotations = (secret.get("metadata") or {}).get("annotations") or {}
    env: list[dict[str, Any]] = container.setdefault("env", [])
    s3_key = config.s3.secret_access_key_name or DEFAULT_S3_SECRET_ACCESS_KEY_NAME
    gcs_file = config.gcs.credential_file_name or GCS_DEFAULT_CREDENTIAL_FILE
    if s3_key in data:
        # merged so that values from the Secret override those from IRSA annotations
        container["env"] = merge_envs(env, _s3_secret_env(secret_name, annotations, data, config.s3))
    elif gcs_file in data:
        append_volume_if_absent(volumes, {"name": GCS_VOLUME, "secret": {"secretName": secret_name}})
        container.setdefault("volumeMounts", []).append(
            {"name": GCS_VOLUME, "mountPath": GCS_MOUNT_PATH, "readOnly": True}
        )
        env.append({"name": GCS_ENV, "value": GCS_MOUNT_PATH + gcs_file})
    elif AZURE_LEGACY_CLIENT_ID in data or AZURE_CLIENT_ID in data or AZURE_ACCESS_TOKEN in data:
        env.extend(_azure_env(secret_name, data))
    elif AZURE_STORAGE_ACCESS_KEY in data:
        env.append(secret_ref_env(AZURE_STORAGE_ACCESS_KEY, secret_name, AZURE_STORAGE_ACCESS_KEY))
    elif HTTPS_HOST in data:
        if HTTPS_HEADERS in data:
            host = data[HTTPS_HOST].decode(errors="replace")
            env.append({"name": f"{host}-{HTTPS_HEADERS}", "value": data[HTTPS_HEADERS].decode(errors="replace")})
    elif HDFS_NAMENODE in data:
        append_volume_if_absent(volumes, {"name": HDFS_VOLUME, "secret": {"secretName": secret_name}})
        container.setdefault("volumeMounts", []).append(
            {"name": HDFS_VOLUME, "mountPath": HDFS_MOUNT_PATH, "readOnly": True}
        )
    elif HF_TOKEN in data:
        env.append(secret_ref_env(HF_TOKEN, secret_name, HF_TOKEN))
    elif MS_TOKEN in data:
        env.append(secret_ref_env(MS_TOKEN, secret_name, MS_TOKEN))
    if not container.get("env"):
        container.pop("env", None)


# --- storage spec path ---------------------------------------------------------------------------------------------
def add_storage_spec_credentials(
    container: dict[str, Any],
    *,
    namespace: str,
    annotations: Mapping[str, str],
    storage_key: str,
    override_params: Mapping[str, str] | None,
    config: CredentialConfig,
    cluster: ClusterState,
    warnings: list[str],
) -> None:
    """``CreateStorageSpecSecretEnvs``: ``STORAGE_CONFIG`` from the storage Secret, placeholder URIs rewritten."""
    params = dict(override_params or {})
    secret_name = config.storage_spec_secret_name or C.DEFAULT_STORAGE_SPEC_SECRET
    if config.storage_secret_name_annotation in annotations:
        secret_name = str(annotations[config.storage_secret_name_annotation])
    env: list[dict[str, Any]] = container.setdefault("env", [])
    stype, bucket = params.get("type", ""), params.get("bucket", "")
    secret = cluster.secret(namespace, secret_name)
    key, payload = _storage_key_and_payload(secret, secret_name, storage_key, stype, namespace, warnings)
    if payload is not None or (secret is None and key):
        if payload is not None and not stype:
            stype, bucket, ca_bundle = _storage_spec_fields(payload, key, secret_name, bucket)
            if ca_bundle is not None:
                env.append({"name": AWS_CA_BUNDLE_CONFIGMAP, "value": ca_bundle})
        env.append(secret_ref_env(C.ENV_STORAGE_CONFIG, secret_name, key))
    if not stype:
        raise InputError("unable to determine storage type", "spec.predictor.model.storage")
    _rewrite_placeholder_uris(container.get("args") or [], stype, bucket)
    if params:
        env.append({"name": C.ENV_STORAGE_OVERRIDE_CONFIG, "value": go_json(params)})
    if not env:
        container.pop("env", None)


def _storage_key_and_payload(
    secret: Mapping[str, Any] | None, secret_name: str, key: str, stype: str, namespace: str, warnings: list[str]
) -> tuple[str, bytes | None]:
    """The storage Secret's key (given, or ``default[_<type>]``) and its content when the Secret is known."""
    if secret is None:
        if key:
            warnings.append(
                f"Secret {namespace}/{secret_name} not in the inputs: STORAGE_CONFIG refers to its key {key!r} unchecked"
            )
        else:
            warnings.append(f"Secret {namespace}/{secret_name} not in the inputs: no STORAGE_CONFIG injected")
        return key, None
    data = secret_data(secret)
    if key and key not in data:
        raise InputError(
            f"specified storage key {key} not found in storage secret {secret_name}", "spec.predictor.model.storage.key"
        )
    key = key or (f"default_{stype}" if stype else "default")
    return key, data.get(key)


def _storage_spec_fields(payload: bytes, key: str, secret_name: str, bucket: str) -> tuple[str, str, str | None]:
    """``type``, ``bucket`` (unless given) and ``cabundle_configmap`` from a storage Secret's JSON entry."""
    try:
        spec = json.loads(payload or b"")
    except ValueError as exc:
        raise InputError(
            f"invalid json encountered in key {key} of storage secret {secret_name}: {exc}", f"data.{key}"
        ) from None
    if not isinstance(spec, dict):
        raise InputError(f"invalid json encountered in key {key} of storage secret {secret_name}", f"data.{key}")
    stype = ""
    if "type" in spec:
        stype = str(spec["type"])
        if stype not in SUPPORTED_STORAGE_SPEC_TYPES:
            raise InputError(
                f"storage type must be one of [{', '.join(SUPPORTED_STORAGE_SPEC_TYPES)}]. storage type [{stype}] is not supported",
                f"data.{key}",
            )
    if "bucket" in spec and not bucket:
        bucket = str(spec["bucket"])
    ca_bundle = str(spec["cabundle_configmap"]) if "cabundle_configmap" in spec else None
    return stype, bucket, ca_bundle


def _rewrite_placeholder_uris(args: list[str], stype: str, bucket: str) -> None:
    """The storage initializer's ``<scheme-placeholder>://path`` arguments, made ``<type>://[<bucket>/]path``."""
    prefix = C.URI_SCHEME_PLACEHOLDER + "://"
    if not (args and args[0].startswith(prefix)):
        return
    for i in range(0, len(args), 2):
        path = args[i][len(prefix) :]
        if stype not in BUCKET_STORAGE_TYPES:
            args[i] = f"{stype}://{path}"
            continue
        if not bucket:
            raise InputError(
                f"format [{stype}] requires a bucket but one wasn't found in storage data or parameters",
                "spec.predictor.model.storage.parameters",
            )
        args[i] = f"{stype}://{bucket}/{path}"


def go_json(value: Any) -> str:
    """``encoding/json.Marshal`` of plain data: compact, map keys sorted, ``<``/``>``/``&`` escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
