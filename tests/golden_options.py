"""A golden scenario's options: a header comment of its input.yaml, ``# options: --pod-webhook cluster``, holds the
flags ``render`` is given for it; the golden tests, the command-line golden test and ``scripts/regen_golden.py``
all read them here (the driver's options from the same flags). Without the line: the defaults."""

from __future__ import annotations

import shlex
from pathlib import Path

from kserve_compile.driver import CompileOptions

OPTIONS_LINE = "# options:"
# flag → (CompileOptions field, its allowed values)
FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {"--pod-webhook": ("pod_webhook", ("inline", "cluster"))}


def golden_flags(scenario: Path) -> list[str]:
    """The flags of the scenario's ``# options:`` header line (the comment lines before the first document)."""
    for line in (scenario / "input.yaml").read_text("utf-8").splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(OPTIONS_LINE):
            return shlex.split(line[len(OPTIONS_LINE) :])
    return []


def golden_options(scenario: Path) -> CompileOptions:
    """The driver's options for the scenario's flags (each flag takes one value)."""
    flags = golden_flags(scenario)
    if len(flags) % 2:
        raise ValueError(f"{scenario.name}: '# options:' takes flag-value pairs, got {flags}")
    fields = {}
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        if flag not in FLAGS or value not in FLAGS[flag][1]:
            raise ValueError(f"{scenario.name}: unsupported option {flag} {value} (known: {sorted(FLAGS)})")
        fields[FLAGS[flag][0]] = value
    return CompileOptions(**fields)  # type: ignore[arg-type]
