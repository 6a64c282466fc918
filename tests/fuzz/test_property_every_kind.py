"""Property: any input of any kind, through the one driver and through the command line, renders (exit 0) or is
refused with located problems (exit 1) — never an internal error (exit 3), a traceback or a hang.

The inputs are real ones — every golden scenario, every example, foreign objects — with one to three fields
mutated (replaced by another value or shape, deleted, or added). CI runs a fixed number of examples with a fixed
seed, then the same number with a random seed (printed, so a failure can be replayed with
``KSERVE_COMPILE_FUZZ_SEED``); ``python scripts/fuzz.py --every-kind`` runs as many as you like.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, note, seed, settings
from typer.testing import CliRunner

from kserve_compile.cli.app import register
from kserve_compile.driver import compile
from kserve_compile.emit import dump_yaml
from kserve_compile.errors import CompileError
from kserve_compile.inputs.parse import parse_text

from .strategies import mutated_inputs

EXAMPLES = int(os.environ.get("KSERVE_COMPILE_FUZZ_EXAMPLES", "300"))
RANDOM_SEED = int(os.environ.get("KSERVE_COMPILE_FUZZ_SEED", random.randrange(2**32)))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _assert_located(exc: CompileError, name: str) -> None:
    assert exc.problems, "a CompileError carries at least one problem"
    for p in exc.problems:
        assert p.message.strip() and p.file == name, p
        assert p.path or p.line or p.kind or p.severity != "error" or "no Kubernetes objects" in p.message, p


def check_driver(name: str, docs: list[Any]) -> None:
    """Parse the mutated text and compile it: located problems, or output that reads back as it was written."""
    try:
        parsed = parse_text(yaml.safe_dump_all(docs, sort_keys=False), name)
        if not parsed:
            return  # nothing left to compile (the command line names the empty file: check_cli)
        result = compile(parsed)
    except CompileError as exc:
        _assert_located(exc, name)
        return
    out = dump_yaml(result.objects)
    assert [d.data for d in parse_text(out, "out.yaml")] == result.objects


def check_cli(tmp: Path, name: str, docs: list[Any]) -> None:
    path = tmp / Path(name).name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), "utf-8")
    result = CliRunner().invoke(register("..cli.compile_commands"), ["render", str(path)], catch_exceptions=False)
    assert result.exit_code in (0, 1), f"exit {result.exit_code}: {result.output[-2000:]}"
    assert "Traceback" not in result.output and "internal error" not in result.output


@FUZZ
@seed(20261201)
@given(mutated_inputs())
def test_every_kind_mutated_compiles_or_is_refused_fixed_seed(case: tuple[str, list[Any]]) -> None:
    check_driver(*case)


@FUZZ
@seed(RANDOM_SEED)
@given(mutated_inputs())
def test_every_kind_mutated_compiles_or_is_refused_random_seed(case: tuple[str, list[Any]]) -> None:
    note(f"replay with KSERVE_COMPILE_FUZZ_SEED={RANDOM_SEED}")
    check_driver(*case)


@settings(max_examples=max(EXAMPLES // 3, 1), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@seed(20261202)
@given(mutated_inputs())
def test_every_kind_mutated_through_the_cli_exits_0_or_1(tmp_path_factory: Any, case: tuple[str, list[Any]]) -> None:
    check_cli(tmp_path_factory.mktemp("in"), *case)
