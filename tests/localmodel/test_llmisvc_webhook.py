"""The webhook's local-model labels on an LLMInferenceService (pkg/webhook/admission/llminferenceservice/defaulter.go
applyDefaults / SetLocalModelLabel / DeleteLocalModelMetadata; the cases are defaulter_test.go's unless noted)."""

from __future__ import annotations

import pytest

from kserve_compile.inputs.config import LocalModelConfig
from kserve_compile.localmodel.cache_types import LocalModelCache, LocalModelNamespaceCache
from kserve_compile.localmodel.llmisvc import llm_local_model_metadata

from .helpers import cache

LM = "internal.serving.kserve.io/localmodel"
LM_NS = "internal.serving.kserve.io/localmodel-namespace"
PVC = "internal.serving.kserve.io/localmodel-pvc-name"
SRC = "internal.serving.kserve.io/localmodel-sourceuri"
GROUP = "serving.kserve.io/nodegroup"
DISABLE = "serving.kserve.io/disable-localmodel"
ON = LocalModelConfig(enabled=True, jobNamespace="jobs")
URI = "s3://mybucket/mymodel"


def _cluster(name: str = "my-cache", uri: str = URI, groups: tuple[str, ...] = ("gpu1",)) -> LocalModelCache:
    return LocalModelCache.model_validate(cache(name, uri, list(groups)))


def _ns(
    name: str = "ns-cache", namespace: str = "default", groups: tuple[str, ...] = ("gpu2",)
) -> LocalModelNamespaceCache:
    return LocalModelNamespaceCache.model_validate(cache(name, URI, list(groups), namespace=namespace))


def _run(
    uri: str = URI,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    caches: list[LocalModelCache] | None = None,
    ns_caches: list[LocalModelNamespaceCache] | None = None,
    config: LocalModelConfig = ON,
    namespace: str = "default",
) -> tuple[dict[str, str], dict[str, str]]:
    return llm_local_model_metadata(
        namespace, labels or {}, annotations or {}, uri, caches or [], ns_caches or [], config
    )


def test_cluster_scoped() -> None:
    labels, annotations = _run(caches=[_cluster()])
    assert labels == {LM: "my-cache"}
    assert annotations == {SRC: URI, PVC: "my-cache-gpu1"}


def test_namespace_cache_takes_precedence() -> None:
    labels, annotations = _run(caches=[_cluster("cluster-cache")], ns_caches=[_ns()])
    assert labels == {LM: "ns-cache", LM_NS: "default"}
    assert annotations == {SRC: URI, PVC: "ns-cache-gpu2"}


def test_a_namespace_cache_of_another_namespace_does_not_count() -> None:
    # the webhook lists namespace caches in the service's namespace only (client.InNamespace)
    labels, annotations = _run(caches=[_cluster("cluster-cache")], ns_caches=[_ns(namespace="team")])
    assert labels == {LM: "cluster-cache"} and annotations[PVC] == "cluster-cache-gpu1"


def test_cluster_cache_drops_a_stale_namespace_label() -> None:
    labels, _ = _run(labels={LM: "old", LM_NS: "default", "app": "x"}, caches=[_cluster()])
    assert labels == {"app": "x", LM: "my-cache"}


def test_no_match_removes_only_the_four_keys() -> None:
    # TestSetLocalModelLabel_NoMatch, TestDeleteLocalModelMetadata
    labels, annotations = _run(
        uri="s3://mybucket/othermodel",
        labels={LM: "my-cache", LM_NS: "default", "other-label": "value"},
        annotations={SRC: URI, PVC: "my-cache-gpu1", "other-annotation": "value"},
        caches=[_cluster()],
    )
    assert labels == {"other-label": "value"}
    assert annotations == {"other-annotation": "value"}


@pytest.mark.parametrize("uri", ["s3://mybucket/mymodel-evil", "s3://mybucket"])
def test_match_is_at_a_slash_boundary(uri: str) -> None:
    assert _run(uri=uri, caches=[_cluster()]) == ({}, {})


def test_a_sub_path_of_the_cached_uri_matches() -> None:
    labels, annotations = _run(uri=URI + "/snapshots/main", caches=[_cluster()])
    assert labels == {LM: "my-cache"} and annotations[SRC] == URI


def test_node_group_annotation_picks_the_group() -> None:
    # TestSetLocalModelLabel_NodeGroupMatching
    _, annotations = _run(annotations={GROUP: "gpu2"}, caches=[_cluster(groups=("gpu1", "gpu2"))])
    assert annotations == {GROUP: "gpu2", SRC: URI, PVC: "my-cache-gpu2"}


def test_node_group_not_listed_skips_to_the_next_cache() -> None:
    # TestSetLocalModelLabel_NodeGroupNotMatching; a namespace cache without the group falls through to a cluster one
    assert _run(annotations={GROUP: "gpu3"}, caches=[_cluster(groups=("gpu1", "gpu2"))]) == ({}, {GROUP: "gpu3"})
    labels, annotations = _run(annotations={GROUP: "gpu1"}, caches=[_cluster()], ns_caches=[_ns()])
    assert labels == {LM: "my-cache"} and annotations[PVC] == "my-cache-gpu1"


def test_disabled_removes_the_keys_even_without_a_uri() -> None:
    # TestDefault_V1Alpha1Object_Disabled_CleansStaleMetadata; the isvc webhook instead leaves an isvc without a
    # storage URI alone, the LLM one calls DeleteLocalModelMetadata before looking at the URI
    stale = ({LM: "old-cache", LM_NS: "default"}, {SRC: "s3://mybucket/old", PVC: "old-pvc"})
    for config, extra in ((ON, {DISABLE: "true"}), (LocalModelConfig(enabled=False), {})):
        for uri in (URI, ""):
            labels, annotations = _run(uri, stale[0], {**stale[1], **extra}, [_cluster()], config=config)
            assert labels == {} and annotations == extra


def test_enabled_with_an_empty_uri_leaves_the_service_as_written() -> None:
    # SetLocalModelLabel returns at once for an empty model URI (one given only by a baseRefs config)
    labels, annotations = _run("", {LM: "hand"}, {SRC: URI, PVC: "p"}, [_cluster()])
    assert labels == {LM: "hand"} and annotations == {SRC: URI, PVC: "p"}


def test_the_given_mappings_are_not_changed() -> None:
    labels, annotations = {LM_NS: "x"}, {GROUP: "gpu1"}
    _run(labels=labels, annotations=annotations, caches=[_cluster()])
    assert labels == {LM_NS: "x"} and annotations == {GROUP: "gpu1"}
