"""KServe's shipped presets (kserve_compile/data/llmisvc): all present, each found under the name KServe gives it."""

from __future__ import annotations

from importlib import resources

import yaml

from kserve_compile.llmisvc.presets import WELL_KNOWN, embedded_preset


def test_every_shipped_preset_loads_under_its_name() -> None:
    folder = resources.files("kserve_compile").joinpath("data", "llmisvc")
    files = sorted(e.name for e in folder.iterdir() if e.name.endswith(".yaml"))
    assert len(files) == 11
    for name in files:
        data = yaml.safe_load(folder.joinpath(name).read_text("utf-8"))
        assert data["kind"] == "LLMInferenceServiceConfig"
        preset = embedded_preset(data["metadata"]["name"])
        assert preset is not None and preset.namespace == "kserve" and preset.spec == data["spec"]


def test_well_known_names_are_shipped_and_pipeline_parallel_is_not() -> None:
    assert all(embedded_preset("kserve-" + suffix) is not None for suffix in WELL_KNOWN)
    assert embedded_preset("kserve-config-llm-worker-pipeline-parallel") is None
    assert embedded_preset("other") is None
