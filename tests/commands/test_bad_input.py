"""YAML-level bad input: each case gets a clear, located message, exit 1, and nothing on stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cli import run

CASES = {
    "syntax": ("apiVersion: v1\nkind: [unclosed\n", ":3:1: invalid YAML"),
    "duplicate-key": ("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n", ':3:1: duplicate key "kind"'),
    "tab": ("apiVersion: v1\nmetadata:\n\tname: x\n", "a tab: YAML does not allow tabs"),
    "list-document": ("- a\n- b\n", "document 1 is a list, not a Kubernetes object"),
    "scalar-document": ("just a string\n", "document 1 is a str, not a Kubernetes object"),
    "empty": ("", "no Kubernetes objects in the input"),
    "only-comments": ("# nothing\n---\n# here\n", "no Kubernetes objects in the input"),
    "unknown-kserve-kind": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceServis\nmetadata: {name: x}\n",
        "unsupported apiVersion/kind serving.kserve.io/v1beta1/InferenceServis",
    ),
    "no-kind": ("metadata: {name: x}\n", "no Kubernetes objects in the input (only skipped documents)"),
    "merge-key": ("base: &b {a: 1}\nx:\n  <<: *b\n", "merge keys (<<) are not supported"),
    "custom-tag": ("apiVersion: !!python/object:os.system x\n", "unsupported YAML tag"),
    "wrong-type": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec:\n  predictor:\n    minReplicas: two\n",
        "spec.predictor.minReplicas",
    ),
    "unknown-field": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec:\n  predictor:\n    modle: {}\n",
        'unknown field "modle"',
    ),
    "missing-predictor": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec: {}\n",
        "spec.predictor: required field is missing",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_yaml_is_rejected_with_a_located_message(tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    result = run("render", str(path))
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert expected in result.stderr
    assert str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_binary_garbage_is_not_yaml(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    result = run("render", str(path))
    assert result.returncode == 1
    assert "input is binary" in result.stderr


def test_invalid_utf8_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    result = run("render", str(path))
    assert result.returncode == 1
    assert "not UTF-8" in result.stderr


def test_deep_nesting_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 20000 + "]" * 20000 + "\n")
    result = run("render", str(path))
    assert result.returncode == 1
    assert "nesting" in result.stderr


def test_alias_bomb_is_bounded(tmp_path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    prev = "a"
    for i in range(1, 9):
        lines.append(f"b{i}: &b{i} [" + ",".join([f"*{prev}"] * 10) + "]")
        prev = f"b{i}"
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = run("render", str(path))
    assert result.returncode == 1
    assert "alias expansion" in result.stderr
