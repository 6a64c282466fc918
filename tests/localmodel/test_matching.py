"""Which cache covers a storage URI (KServe's MatchStorageURI, GetStorageKey, setLocalModelLabel)."""

from __future__ import annotations

import pytest

from kserve_compile.localmodel.cache_types import LocalModelCache, LocalModelNamespaceCache
from kserve_compile.localmodel.matching import (
    CacheMatch,
    cached_model_uri,
    find_cache,
    local_model_metadata,
    match_storage_uri,
)
from kserve_compile.render.pod_webhook.storage import local_model_storage_key

from .helpers import cache


# pkg/apis/serving/v1alpha1/storage_uri_utils_test.go TestMatchStorageURI
@pytest.mark.parametrize(
    ("cached", "storage", "expected"),
    [
        ("gs://bucket/model", "gs://bucket/model", True),
        ("gs://bucket/model/", "gs://bucket/model", True),
        ("gs://bucket/model", "gs://bucket/model/subdir", True),
        ("gs://bucket/model", "gs://bucket/other", False),
        ("gs://bucket/model", "gs://bucket/model-evil", False),
        ("gs://bucket/model", "gs://bucket/model/", True),
        ("gs://bucket/model", "gs://bucket", False),
    ],
)
def test_match_storage_uri(cached: str, storage: str, expected: bool) -> None:
    assert match_storage_uri(cached, storage) is expected


def test_storage_key_is_sixteen_hex_digits_of_sha256() -> None:
    # local_model_cache_types_test.go TestGetStorageKey: same URI → same key, different URIs → different keys
    key = local_model_storage_key("hf://meta-llama/meta-llama-3-8b-instruct")
    assert len(key) == 16 and int(key, 16) >= 0
    assert key == local_model_storage_key("hf://meta-llama/meta-llama-3-8b-instruct")
    assert key != local_model_storage_key("hf://mistral/mistral-7b-instruct")
    assert local_model_storage_key("s3://mybucket/mymodel") == "89da10faf446bbf1"


def _caches() -> tuple[list[LocalModelCache], list[LocalModelNamespaceCache]]:
    cluster = [
        LocalModelCache.model_validate(cache(n, u, ["gpu1", "gpu2"]))
        for n, u in (("model2", "gs://bucket/model2"), ("model1", "gs://bucket/model"))
    ]
    ns = [LocalModelNamespaceCache.model_validate(cache("ns-model", "gs://bucket/model", ["gpu3"], namespace="team"))]
    return cluster, ns


def test_first_group_without_annotation_and_the_named_group_with_one() -> None:
    cluster, ns = _caches()
    assert find_cache("gs://bucket/model", "default", None, cluster, ns) == CacheMatch(
        "model1", "", "gs://bucket/model", "gpu1"
    )
    match = find_cache("gs://bucket/model", "default", "gpu2", cluster, ns)
    assert match is not None and match.pvc_name == "model1-gpu2"
    assert find_cache("gs://bucket/model", "default", "some-random-gpu", cluster, ns) is None


def test_overlapping_uris_need_a_slash_boundary() -> None:
    cluster, ns = _caches()
    match = find_cache("gs://bucket/model2", "default", "gpu2", cluster, ns)
    assert match is not None and match.name == "model2"


def test_namespace_cache_wins_in_its_namespace_only() -> None:
    cluster, ns = _caches()
    match = find_cache("gs://bucket/model/v1", "team", None, cluster, ns)
    assert match == CacheMatch("ns-model", "team", "gs://bucket/model", "gpu3")
    # a node group the namespace cache does not list falls through to the cluster cache
    fallback = find_cache("gs://bucket/model", "team", "gpu1", cluster, ns)
    assert fallback is not None and fallback.name == "model1"


def test_metadata_set_and_removed() -> None:
    labels, annotations = local_model_metadata(
        {"a": "1", "internal.serving.kserve.io/localmodel-namespace": "old"}, {}, CacheMatch("m", "", "s3://b/m", "g")
    )
    assert labels == {"a": "1", "internal.serving.kserve.io/localmodel": "m"}
    assert annotations == {
        "internal.serving.kserve.io/localmodel-sourceuri": "s3://b/m",
        "internal.serving.kserve.io/localmodel-pvc-name": "m-g",
    }
    labels, annotations = local_model_metadata(labels, {**annotations, "keep": "x"}, None)
    assert labels == {"a": "1"} and annotations == {"keep": "x"}


def test_cached_model_uri_matches_the_pod_webhook() -> None:
    key = local_model_storage_key("gs://b/m")
    assert cached_model_uri("gs://b/m", "gs://b/m", "m-g") == f"pvc://m-g/models/{key}/"
    assert cached_model_uri("gs://b/m/sub/dir", "gs://b/m", "m-g") == f"pvc://m-g/models/{key}/sub/dir"
