"""``--rendered`` manifests are read with the project's one loader: located errors, Lists, Kustomizations."""

from __future__ import annotations

import json

import pytest
from kc_manifests import deployment
from test_apply_cli import app, runner, write

from kserve_compile.apply.manifests import read_manifests
from kserve_compile.errors import CompileError


def test_lists_give_their_items_and_kustomizations_are_skipped(tmp_path):
    listed = {"apiVersion": "v1", "kind": "List", "items": [deployment("a"), deployment("b")]}
    (tmp_path / "list.json").write_text(json.dumps(listed))
    write(tmp_path / "kustomization.yaml", [{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}])
    write(tmp_path / "one.yaml", [deployment("c"), None])
    names = [o["metadata"]["name"] for o in read_manifests([str(tmp_path)])]
    assert names == ["a", "b", "c"]  # files in sorted order; the empty document is no object


def test_invalid_yaml_is_located_as_render_locates_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n\tdata: {}\n")
    with pytest.raises(CompileError) as err:
        read_manifests([str(bad)])
    (problem,) = err.value.problems
    assert problem.format().startswith(f"{bad}:5:1: invalid YAML")
    assert "a tab" in problem.message


def test_objects_without_kind_or_name_are_located(tmp_path):
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ok}\n"
        "- apiVersion: v1\n  metadata: {name: nameless-kind}\n---\napiVersion: v1\nkind: Secret\nmetadata: {}\n"
        "---\n- not an object\n"
    )
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(CompileError) as err:
        read_manifests([str(path)])
    assert [p.format() for p in err.value.problems] == [
        f"{path}:14:1: document 3 is a list, not a Kubernetes object (a mapping)",
    ]  # a document that is no mapping stops the parse, as in render
    path.write_text(text.rsplit("---", 1)[0])
    with pytest.raises(CompileError) as err:
        read_manifests([str(path)])
    assert [p.format() for p in err.value.problems] == [
        f"{path}:7:3: items[1]: kind required",
        f"{path}:10:1: Secret: metadata.name required",
    ]


def test_apply_of_a_bad_manifest_exits_1_with_the_position_and_sends_nothing(fake, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec: [\n")
    result = runner.invoke(app(), ["apply", str(bad), "--rendered", "--server", fake.url, "-n", "ns"])
    assert result.exit_code == 1 and f"{bad}:6:1: invalid YAML" in result.stderr
    assert "Traceback" not in result.output and fake.writes() == []


def test_cluster_diff_of_invalid_input_exits_2_not_1(fake, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Deployment\nmetadata: {name: d}\n")
    result = runner.invoke(app(), ["diff", "--cluster", str(bad), "--rendered", "--server", fake.url, "-n", "ns"])
    assert result.exit_code == 2  # kubectl diff: 1 means "differences found", above 1 that the diff failed
    assert f"{bad}:1:1: Deployment/d: apiVersion required" in result.stderr
