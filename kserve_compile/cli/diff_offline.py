"""``kserve-compile diff A B`` without ``--cluster``: render both sides and diff the rendered objects.

The offline front end of the one diff core (``kserve_compile.emit.diff``; the cluster front end is ``apply/diff.py``).

A side is a file, a directory, ``-``, or ``REV:path`` — ``path`` as Git has it at revision ``REV`` (``HEAD~1:models``,
``main:deploy/isvc.yaml``), read with ``git`` from the current directory's repository. Each side is rendered with the
same ``--config``, ``-n`` and pass-through rules as ``render``; a side that is already rendered (an ``--output-dir``)
passes through as it is, so rendered directories compare too.

Exit codes as ``kubectl diff``: 0 no differences, 1 differences, 2 or more an error (invalid input included).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CompileError, Problem, UsageError
from .exits import EXIT_USAGE, ErrorFormat, report

_REV = re.compile(r"^(?P<rev>[^:\s]+):(?P<path>.*)$")


def offline_diff(
    files: Sequence[str],
    config: str | None,
    namespace: str | None,
    output: str = "text",
    error_format: ErrorFormat = ErrorFormat.text,
    quiet: bool = False,
) -> int:
    """Print the per-object diffs of two renders; the exit code (invalid input is 2, as any diff error)."""
    from ..emit.diff import OUTPUTS, diff_objects, format_diffs

    if output not in OUTPUTS:
        raise UsageError(f"-o/--output must be one of {', '.join(OUTPUTS)} for an offline diff, got {output!r}")
    if len(files) != 2:
        raise UsageError(
            "offline diff takes exactly two paths (A B; a path may be REV:path); use --cluster to compare with a cluster"
        )
    try:
        (before, early), (after, late) = (_render_side(side, config, namespace) for side in files)
    except CompileError as exc:
        report([p for p in exc.problems if p.severity == "error" or not quiet], error_format)
        return EXIT_USAGE
    if not quiet:
        report(early + late, error_format)
    diffs = diff_objects(before, after)
    sys.stdout.write(format_diffs(diffs, output))
    return 1 if diffs else 0


def _render_side(side: str, config: str | None, namespace: str | None) -> tuple[list[dict[str, Any]], list[Problem]]:
    from ..driver import CompileOptions, compile
    from ..inputs.gather import read_inputs

    options = CompileOptions(namespace=namespace)
    match = _REV.match(side)
    if side == "-" or os.path.exists(side) or not match:
        result = compile(read_inputs([side], config), options)
        return result.objects, result.warnings
    with tempfile.TemporaryDirectory(prefix="kserve-compile-diff-") as tmp:
        root = _checkout(match["rev"], match["path"], Path(tmp))
        docs = read_inputs([str(root)], config)
        for doc in docs:  # name files as the user wrote them, not by the temporary copy
            doc.file = doc.file.replace(str(root), side.rstrip("/"), 1)
        result = compile(docs, options)
        return result.objects, result.warnings


def _git(*args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False, timeout=120)
    except FileNotFoundError:
        raise UsageError("a REV:path side needs git, which is not installed") from None
    if done.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _checkout(rev: str, path: str, into: Path) -> Path:
    """The files under ``path`` at ``rev`` (path relative to the current directory, as ``git show REV:./path``)."""
    prefix = _git("rev-parse", "--show-prefix").decode().strip()
    spec = os.path.normpath(os.path.join(prefix, path or "."))
    spec = "" if spec == "." else spec
    if _git("cat-file", "-t", f"{rev}:{spec}").strip() == b"blob":
        target = into / Path(spec).name
        target.write_bytes(_git("show", f"{rev}:{spec}"))
        return target
    names = _git("ls-tree", "-r", "--name-only", "-z", rev, "--", spec or ".").decode().split("\0")
    root = into / "tree"
    root.mkdir()
    for name in filter(None, names):
        rel = os.path.relpath(name, spec) if spec else name
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git("show", f"{rev}:{name}"))
    return root
