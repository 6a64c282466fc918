#!/usr/bin/env python3
"""Rewrite golden/<scenario>/expected.yaml from the current renderer.

Usage: scripts/regen_golden.py [SCENARIO...]   (no argument: every scenario)

This is the documented way to update golden files after a reviewed change to the compiler: run it, then read the
diff (`git diff golden/`) against KServe's behaviour before committing. Only expected.yaml is written; input.yaml,
with its header naming the KServe test it was checked against (and an optional ``# options:`` line of flags, read
by tests/golden_options.py), is never touched.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
sys.path.insert(0, str(ROOT))

from kserve_compile.driver import compile as compile_documents  # noqa: E402
from kserve_compile.emit import dump_yaml  # noqa: E402
from kserve_compile.inputs.parse import parse_paths  # noqa: E402
from tests.golden_options import golden_options  # noqa: E402


def render(scenario: Path) -> str:
    docs = parse_paths([str(scenario / "input.yaml")])
    return dump_yaml(compile_documents(docs, golden_options(scenario)).objects)


def scenarios(names: list[str]) -> list[Path]:
    if not names:
        return sorted(p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())
    out = []
    for name in names:
        path = GOLDEN / Path(name).name
        if not (path / "input.yaml").is_file():
            raise SystemExit(f"no scenario {name!r}: {path / 'input.yaml'} does not exist")
        out.append(path)
    return out


def main(argv: list[str]) -> int:
    changed = 0
    for scenario in scenarios(argv):
        text = render(scenario)
        target = scenario / "expected.yaml"
        if not target.exists() or target.read_text("utf-8") != text:
            target.write_text(text, "utf-8")
            changed += 1
            print(f"updated {target.relative_to(ROOT)}")
    print(f"{changed} expected.yaml file(s) changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
