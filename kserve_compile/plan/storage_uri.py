"""Storage URI checks the controller makes before it writes the storage-initializer annotation."""

from __future__ import annotations

import re

from ..errors import InputError

SUPPORTED_PREFIXES = (
    "gs://",
    "s3://",
    "pvc://",
    "file://",
    "https://",
    "http://",
    "hdfs://",
    "webhdfs://",
    "oci://",
    "oci+native://",
    "oci+fetch://",
    "hf://",
)
# Accepted through KServe's shipped default ClusterStorageContainer only (config/storagecontainers/default.yaml).
DEFAULT_STORAGE_CONTAINER_PREFIXES = ("modelscope://",)
AZURE_BLOB_HOST = ".blob.core.windows.net"
_AZURE_BLOB = re.compile(r"https://(.+?).blob.core.windows.net/(.+)")
_HAS_SCHEME = re.compile(r"\w+?://")


def validate_storage_uri(uri: str, path: str) -> None:
    """``ValidateStorageURI``: local paths, supported schemes and Azure blob URLs pass; anything else is an error."""
    if uri.startswith(DEFAULT_STORAGE_CONTAINER_PREFIXES) or not _HAS_SCHEME.search(uri):
        return
    if AZURE_BLOB_HOST in uri:
        if _AZURE_BLOB.search(uri):
            return
    elif uri.startswith(SUPPORTED_PREFIXES):
        return
    raise InputError(
        "StorageURI not supported: storageUri, must be one of: ["
        + ", ".join(SUPPORTED_PREFIXES)
        + "] or match https://{}.blob.core.windows.net/{}/{} or be an absolute or relative local path. "
        + f"StorageUri [{uri}] is not supported",
        path,
    )
