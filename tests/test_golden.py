"""Golden scenarios: each golden/<name>/input.yaml renders to exactly golden/<name>/expected.yaml.

Every input starts with a comment naming the KServe test or source lines its expected output was checked against;
a ``# options:`` comment line may give it flags (``tests/golden_options.py``).
The comparison is made on parsed objects (a readable failure) and on bytes (the emitter is deterministic), and the
input documents are also compiled in reverse order, which must not change a byte.
Regenerate after a reviewed change with scripts/regen_golden.py.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from kserve_compile.driver import compile as compile_documents
from kserve_compile.emit import dump_yaml
from kserve_compile.inputs.parse import parse_paths
from tests.golden_options import golden_options

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())


def _render(docs: list, scenario: Path) -> str:
    return dump_yaml(compile_documents(docs, golden_options(scenario)).objects)


def _diff(expected: str, actual: str, name: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True), f"golden/{name}/expected.yaml", "rendered"
    )
    return "".join(lines)


def test_there_are_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 35, SCENARIOS


@pytest.mark.parametrize("name", SCENARIOS)
def test_input_names_its_kserve_source(name: str) -> None:
    first = (GOLDEN / name / "input.yaml").read_text("utf-8").splitlines()[0]
    assert first.startswith("# ") and ("_test.go" in first or ".go" in first or "config/" in first), first


@pytest.mark.parametrize("name", SCENARIOS)
def test_golden(name: str) -> None:
    scenario = GOLDEN / name
    expected = (scenario / "expected.yaml").read_text("utf-8")
    docs = parse_paths([str(scenario / "input.yaml")])
    actual = _render(docs, scenario)
    assert list(yaml.safe_load_all(actual)) == list(yaml.safe_load_all(expected)), _diff(expected, actual, name)
    assert actual == expected, _diff(expected, actual, name)
    reversed_text = _render(list(reversed(docs)), scenario)
    assert reversed_text == expected, "input order changed the output:\n" + _diff(expected, reversed_text, name)
