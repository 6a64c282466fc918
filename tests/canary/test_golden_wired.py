"""golden/canary-* and golden/multinode-* rendered through the proposed pipeline wiring (tests/canary/wiring.py).

tests/test_golden.py renders the same scenarios through ``pipeline.compile_documents``; it agrees with this test once
the lead has wired ``build_canaries``/``canary_objects``/``route_canaries`` and ``expand_multinode``/``multinode_objects``
into the pipeline as the wiring module does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kserve_compile.emit import dump_yaml

from .wiring import compile_wired

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
MINE = sorted(p.name for p in GOLDEN.iterdir() if p.name.startswith(("canary-", "multinode-")) and (p / "input.yaml").is_file())


def test_there_are_six_or_more_scenarios() -> None:
    assert len([n for n in MINE if n.startswith("canary-")]) >= 3
    assert len([n for n in MINE if n.startswith("multinode-")]) >= 3


@pytest.mark.parametrize("name", MINE)
def test_wired_render_matches_golden(name: str) -> None:
    expected = (GOLDEN / name / "expected.yaml").read_text("utf-8")
    actual = dump_yaml(compile_wired(GOLDEN / name / "input.yaml"))
    assert list(yaml.safe_load_all(actual)) == list(yaml.safe_load_all(expected))
    assert actual == expected


@pytest.mark.parametrize("name", MINE)
def test_input_names_its_kserve_source(name: str) -> None:
    first = (GOLDEN / name / "input.yaml").read_text("utf-8").splitlines()[0]
    assert first.startswith("# Checked against KServe ") and (".go" in first or "config/runtimes" in first)
