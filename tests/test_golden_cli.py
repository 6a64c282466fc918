"""Every golden input through the command line a user runs: ``kserve-compile render golden/<name>/input.yaml``
prints exactly golden/<name>/expected.yaml, with the flags of its ``# options:`` line (the golden tests call the
driver; this proves the CLI's path is the same one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden_options import golden_flags

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_cli_renders_the_golden_output(name: str) -> None:
    scenario = GOLDEN / name
    done = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "render", "-q", *golden_flags(scenario), str(scenario / "input.yaml")],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    assert done.stdout.decode("utf-8") == (scenario / "expected.yaml").read_text("utf-8")
