"""Runs without local-model inputs pay nothing for them: only the tiny rewrite hook is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
from kserve_compile.inputs.parse import parse_paths
from kserve_compile.driver import compile
compile(parse_paths([sys.argv[1]]))
loaded = sorted(m for m in sys.modules if m.startswith("kserve_compile.localmodel"))
print(",".join(loaded))
"""


def test_an_isvc_without_caches_loads_only_the_hook() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE, str(ROOT / "examples" / "sklearn-iris.yaml")],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "kserve_compile.localmodel,kserve_compile.localmodel.rewrite"
