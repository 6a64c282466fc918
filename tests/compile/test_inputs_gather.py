"""Inputs are gathered once (inputs.read_inputs / cluster_inputs): render, status, validate and the daemon agree."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kserve_compile.api import CompileOptions, render_files, render_objects, render_result
from kserve_compile.errors import CompileError

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CA = GOLDEN / "ca-bundle-configmap" / "input.yaml"


def _split(tmp_path: Path) -> tuple[Path, Path]:
    """The CA-bundle scenario with its inferenceservice-config in a --config file and the rest as inputs."""
    docs = list(yaml.safe_load_all(CA.read_text("utf-8")))
    config = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "inferenceservice-config"]
    rest = [d for d in docs if d not in config]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump_all(config))
    (tmp_path / "inputs.yaml").write_text(yaml.safe_dump_all(rest))
    return tmp_path / "config.yaml", tmp_path / "inputs.yaml"


def test_a_ca_bundle_configmap_among_the_inputs_is_found_with_a_config_file(tmp_path: Path) -> None:
    config, inputs = _split(tmp_path)
    split = render_files([str(inputs)], config_file=str(config))
    whole = render_files([str(CA)])
    assert split == whole
    assert any(o["metadata"]["name"] == "global-ca-bundle" for o in split)


@pytest.mark.parametrize("command", ["render", "status", "validate"])
def test_every_command_rejects_a_config_file_without_the_configmap(tmp_path: Path, command: str) -> None:
    _, inputs = _split(tmp_path)
    empty = tmp_path / "not-a-config.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: something-else\n")
    run = {
        "render": lambda: render_result([str(inputs)], str(empty)),
        "status": lambda: render_result([str(inputs)], str(empty)).status_rows(),
        "validate": lambda: render_result([str(inputs)], str(empty), CompileOptions(kube_version="1.32")),
    }[command]
    with pytest.raises(CompileError) as err:
        run()
    [problem] = err.value.problems
    assert problem.file == str(empty) and "holds no inferenceservice-config ConfigMap" in problem.message


def test_the_daemons_path_renders_what_the_files_path_renders() -> None:
    docs = list(yaml.safe_load_all(CA.read_text("utf-8")))
    config = next(d for d in docs if d["metadata"]["name"] == "inferenceservice-config")
    others = [d for d in docs if d is not config]
    assert render_objects(others, configmap=config) == render_files([str(CA)])
