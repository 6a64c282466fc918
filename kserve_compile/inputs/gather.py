"""Gathering: the one way every command and the daemon assemble a run's documents (files, directories, stdin, the
``--config`` file, or live objects from a cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import constants as C
from ..errors import CompileError, Problem
from .knative_features import is_features_configmap
from .parse import Document, parse_paths
from .passthrough import is_config


def assemble(inputs: Sequence[Document], config: Sequence[Document] | None = None) -> list[Document]:
    """A run's documents: ``inputs``, with ``config`` (the ``--config`` file's ConfigMaps, or the cluster's
    ``inferenceservice-config``) in place of any ``inferenceservice-config`` among them — and of Knative's
    ``config-features`` when it holds one. Other ConfigMaps of the inputs (the CA-bundle source) stay; without
    either, KServe's shipped config is used."""
    if config is None:
        return list(inputs)
    features = any(is_features_configmap(d) for d in config)
    return [d for d in inputs if not is_config(d) and not (features and is_features_configmap(d))] + list(config)


def config_documents(path: str) -> list[Document]:
    """The ConfigMaps of a ``--config`` file, which must hold the ``inferenceservice-config`` one."""
    maps = [d for d in parse_paths([path]) if d.api_version == "v1" and d.kind == "ConfigMap"]
    if not any(is_config(d) for d in maps):
        raise CompileError([Problem(f"--config file holds no {C.CONFIGMAP_NAME} ConfigMap", file=path)])
    return maps


def read_inputs(paths: Sequence[str], config_file: str | None = None) -> list[Document]:
    """Files, directories or ``-``, with the ``--config`` file applied: what every command reads."""
    return assemble(parse_paths(paths), config_documents(config_file) if config_file is not None else None)


def cluster_inputs(objects: Sequence[dict[str, Any]], configmap: dict[str, Any] | None, source: str) -> list[Document]:
    """The same from live objects (the daemon's informer caches); ``configmap`` is the cluster's config."""
    docs = [Document(obj, source, i) for i, obj in enumerate(objects)]
    return assemble(docs, [Document(configmap, source, len(docs))] if configmap is not None else None)
