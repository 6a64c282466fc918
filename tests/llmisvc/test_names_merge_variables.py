"""Names (kmeta.ChildName), MergeSpecs and ReplaceVariables, checked against KServe's unit tests."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from kserve_compile.errors import InputError
from kserve_compile.gotemplate import Struct
from kserve_compile.inputs.parse import Document
from kserve_compile.llmisvc.llm_types import LLMService
from kserve_compile.llmisvc.names import child_name
from kserve_compile.llmisvc.spec_merge import merge_specs
from kserve_compile.llmisvc.variables import (
    GlobalConfig,
    kv_transfer_config,
    replace_variables,
    shutdown_timeout,
    template_data,
)


def test_child_name_short_and_long() -> None:
    assert child_name("svc", "-kserve") == "svc-kserve"
    parent = "a" * 60
    name = child_name(parent, "-kserve")
    assert len(name) == 63 and name.endswith("-kserve") and name.startswith("a" * 24)
    # a suffix over 31 characters hashes parent+suffix and pads with the suffix's head (knative kmeta)
    long = child_name("ns", "-" + "x" * 70)
    assert len(long) == 63 and long.startswith("ns") and long.endswith("x")


def test_merge_specs_subfield_override() -> None:
    # config_merge_test.go TestMergeSpecs "two configs simple merge with sub-field override"
    a = {"model": {"uri": "model-a"}, "router": {"route": {}, "gateway": {}, "scheduler": {}}}
    b = {"model": {"uri": "model-a"}, "router": {"scheduler": {"pool": {"spec": {"targetPorts": [{"number": 9999}]}}}}}
    assert merge_specs(a, b) == {
        "model": {"uri": "model-a"},
        "router": {"route": {}, "gateway": {}, "scheduler": {"pool": {"spec": {"targetPorts": [{"number": 9999}]}}}},
    }


def test_merge_specs_containers_by_name_and_lists_replaced() -> None:
    base = {"template": {"containers": [{"name": "main", "image": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "side"}]},
            "router": {"route": {"http": {"spec": {"rules": [{"name": "r1"}, {"name": "r2"}]}}}}}  # fmt: skip
    over = {"template": {"containers": [{"name": "main", "env": [{"name": "Y", "value": "2"}]}]},
            "router": {"route": {"http": {"spec": {"rules": [{"name": "r3"}]}}}}}  # fmt: skip
    out = merge_specs(base, over)
    main = out["template"]["containers"][0]
    assert main["image"] == "a" and [e["name"] for e in main["env"]] == ["Y", "X"]
    assert [c["name"] for c in out["template"]["containers"]] == ["main", "side"]
    assert out["router"]["route"]["http"]["spec"]["rules"] == [{"name": "r3"}]


def _svc(spec: dict, name: str = "test-llm-preset", namespace: str = "test-llm-preset-test") -> LLMService:
    return LLMService(name, namespace, {}, {}, spec, {}, Document({}, "x"))


def _data(spec: dict, tls: bool = False) -> Struct:
    svc = _svc(spec)
    return template_data(svc, spec, GlobalConfig("kserve", "kserve-ingress-gateway", "kserve", tls, "X-Gateway-Model-Name"),
                         f"{svc.namespace}/{svc.name}-inference-pool")  # fmt: skip


def test_replace_model_name_and_child_name() -> None:
    # config_merge_test.go TestReplaceVariables "Replace model name", "template with ChildName function"
    cfg = {"model": {"name": "{{ .Spec.Model.Name }}"},
           "template": {"serviceAccountName": "{{ ChildName .Name `-sa` }}", "containers": [{"args": ["--served-model-name", "{{ .Spec.Model.Name }}"]}]}}  # fmt: skip
    out = replace_variables(cfg, _data({"model": {"name": "meta-llama/Llama-3.2-3B-Instruct"}}))
    assert out["model"]["name"] == "meta-llama/Llama-3.2-3B-Instruct"
    assert out["template"]["containers"][0]["args"][1] == "meta-llama/Llama-3.2-3B-Instruct"
    assert out["template"]["serviceAccountName"] == "test-llm-preset-sa"


def test_missing_key_is_an_error_with_gos_wording() -> None:
    with pytest.raises(InputError, match="failed to merge config: .*can't evaluate field Nope"):
        replace_variables({"labels": {"a": "{{ .Spec.Nope }}"}}, _data({}))


def test_unbalanced_string_falls_back_to_the_whole_document() -> None:
    cfg = {"template": {"containers": [{"args": ["{{ if .GlobalConfig.EnableTLS }}--tls", "--x{{ end }}"]}]}}
    assert replace_variables(cfg, _data({}, tls=True))["template"]["containers"][0]["args"] == ["--tls", "--x"]
    # with TLS off the action eats the text between the two strings, JSON punctuation included, as in Go
    assert replace_variables(cfg, _data({}, tls=False))["template"]["containers"][0]["args"] == [""]
    broken = {"a": "{{ if .GlobalConfig.EnableTLS }}x", "b": {"c": "y{{ end }}"}}
    with pytest.raises(InputError, match="failed to unmarshal config from template"):
        replace_variables(broken, _data({}, tls=False))


def test_shutdown_timeout() -> None:
    assert shutdown_timeout(None, 15) == 40
    assert shutdown_timeout(Struct(TerminationGracePeriodSeconds=30), 15) == 10
    assert shutdown_timeout(Struct(TerminationGracePeriodSeconds=3), 15) == 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not available")
def test_kv_transfer_config_is_bash_safe() -> None:
    # config_merge_test.go TestReplaceVariables_KVTransferConfigBashSafe
    script = 'KV_TRANSFER_ARGS="{{ kvTransferConfig .Spec.KVCacheOffloading }}"\neval "set -- ${KV_TRANSFER_ARGS}"\nprintf \'%s\' "$2"'
    out = replace_variables({"template": {"containers": [{"command": ["/bin/bash", "-c", script]}]}},
                            _data({"kvCacheOffloading": {"cpu": "10Gi", "evictionPolicy": "lru"}}))  # fmt: skip
    rendered = out["template"]["containers"][0]["command"][2]
    assert "--kv-transfer-config '" in rendered
    parsed = json.loads(subprocess.run(["bash", "-c", rendered], capture_output=True, text=True, check=True).stdout)
    assert parsed["kv_connector"] == "OffloadingConnector" and parsed["kv_role"] == "kv_both"
    assert parsed["kv_connector_extra_config"] == {
        "spec_name": "TieringOffloadingSpec",
        "eviction_policy": "lru",
        "cpu_bytes_to_use": 10 * 2**30,
    }


def test_kv_transfer_config_absent_is_empty() -> None:
    assert kv_transfer_config(None) == ""
