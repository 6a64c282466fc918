"""`kserve-compile status` for LLMInferenceService (router.go updateRoutingStatus, workload_status.go)."""

from __future__ import annotations

import yaml

from kserve_compile.driver import compile
from kserve_compile.inputs.parse import parse_text

from .helpers import configmap, llmisvc


def status(*manifests: dict) -> dict[str, dict]:
    docs = parse_text(yaml.safe_dump_all(list(manifests)), "in.yaml")
    return dict(compile(docs).status_rows())


def test_unrouted_service_reports_the_workload_service_address() -> None:
    st = status(llmisvc("svc", prefill={"template": {"containers": [{"name": "main"}]}}))["llm-test/svc"]
    assert st["addresses"] == [{"url": "http://svc-kserve-workload-svc.llm-test.svc.cluster.local"}]
    assert "url" not in st
    assert st["workloads"]["primary"] == {"apiGroup": "apps", "kind": "Deployment", "name": "svc-kserve"}
    assert st["workloads"]["prefill"]["name"] == "svc-kserve-prefill"
    assert [c["name"] for c in st["appliedConfigs"]] == [
        "kserve-config-llm-prefill-template",
        "kserve-config-llm-decode-template",
    ]
    assert st["annotations"]["serving.kserve.io/config-llm-template"] == "kserve-config-llm-template"


def test_routed_service_url_from_gateway_address_option() -> None:
    cm = configmap(enableLLMInferenceServiceTLS=True)
    cm["data"]["llmisvcCompile"] = '{"gatewayAddresses": {"kserve/kserve-ingress-gateway": "https://llm.example.com"}}'
    st = status(cm, llmisvc("svc", router={"scheduler": {}, "route": {}, "gateway": {}}))["llm-test/svc"]
    assert st["url"] == "https://llm.example.com/llm-test/svc"
    assert st["router"] == {"gateways": ["kserve/kserve-ingress-gateway"],
                            "scheduler": {"inferencePool": "svc-inference-pool", "service": "svc-epp-service"}}  # fmt: skip
    assert st["workloads"]["scheduler"]["name"] == "svc-kserve-router-scheduler"


def test_routed_service_without_address_has_only_its_path() -> None:
    st = status(llmisvc("svc", router={"route": {}, "gateway": {}}))["llm-test/svc"]
    assert st["path"] == "/llm-test/svc" and "url" not in st and "scheduler" not in st["router"]


def test_pinned_names_in_status_are_used() -> None:
    manifest = llmisvc("svc")
    manifest["status"] = {"annotations": {"serving.kserve.io/config-llm-template": "v2-config-llm-template"}}
    extra = {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceServiceConfig",
             "metadata": {"name": "v2-config-llm-template", "namespace": "kserve"}, "spec": {"labels": {"v": "2"}}}  # fmt: skip
    st = status(manifest, extra)["llm-test/svc"]
    assert st["appliedConfigs"] == [{"name": "v2-config-llm-template", "namespace": "kserve", "source": "Preset"}]
    assert st["annotations"]["serving.kserve.io/config-llm-template"] == "v2-config-llm-template"
