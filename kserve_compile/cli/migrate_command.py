"""``migrate``: rewrite input files in place to the form KServe's webhook stores (``kserve_compile.migrate``).

Writes are all-or-nothing: every new file is written to a temporary file beside it first; only when all are
written are they renamed over the originals, and a failed rename puts back the files already replaced.
``--dry-run`` writes nothing and exits like ``kubectl diff``: 0 nothing to change, 1 changes would be made, 2 an
error. The migrated files are compiled by the driver first (as ``render`` would read them): invalid input is
refused (exit 1) and nothing is written.
"""

import os
import sys
import tempfile
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from .exits import EXIT_DIFF_FAILED, EXIT_INVALID, EXIT_OK, ErrorFormat, guarded, report
from .options import NAMESPACE, compile_options

if TYPE_CHECKING:
    from ..migrate import Migration


class MigrateFormat(str, Enum):
    diff = "diff"
    json_patch = "json-patch"


def migrate(
    files: Annotated[
        list[str], typer.Argument(help="YAML/JSON files or directories to rewrite (- reads stdin; needs --dry-run).")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the changes instead of writing; exit 1 when there are some.")
    ] = False,
    output: Annotated[
        MigrateFormat | None,
        typer.Option(
            "-o", "--output", help="diff (unified, the default with --dry-run) or json-patch (RFC 6902 per object)."
        ),
    ] = None,
    config: Annotated[
        str | None, typer.Option("--config", help="The inferenceservice-config ConfigMap the webhook reads.")
    ] = None,
    error_format: Annotated[
        ErrorFormat, typer.Option("--error-format", help="text, json or github.")
    ] = ErrorFormat.text,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Do not print warnings or the summary.")] = False,
    namespace: str | None = NAMESPACE,
) -> None:
    """Rewrite InferenceServices to the form KServe stores (legacy deploymentMode names, predictor.<framework> →
    predictor.model, and the webhook's other rewrites), keeping comments and layout, so GitOps tools show no drift."""

    def body() -> int:
        from ..errors import CompileError, UsageError
        from ..migrate import migrate_paths
        from ..migrate.output import json_patches, summary, unified_diff

        if not dry_run and "-" in files:
            raise UsageError("cannot rewrite stdin in place; use --dry-run to print the changes")
        try:
            result = migrate_paths(files, config)
            _validate(result, config, namespace)
        except CompileError as exc:
            if not dry_run:
                raise
            report([p for p in exc.problems if p.severity == "error" or not quiet], error_format)
            return EXIT_DIFF_FAILED  # as kubectl diff: 1 means "changes", an error is 2
        if not quiet:
            report(result.warnings, error_format)
        changed = result.changed
        fmt = output or (MigrateFormat.diff if dry_run else None)
        if fmt is not None:
            text = json_patches(changed) if fmt is MigrateFormat.json_patch else unified_diff(changed)
            sys.stdout.buffer.write(text.encode("utf-8"))
            sys.stdout.flush()
        if dry_run:
            return EXIT_INVALID if changed else EXIT_OK
        write_all([(f.file, f.old_text, f.new_text) for f in changed])
        if not quiet:
            sys.stderr.write(summary(changed) or "nothing to migrate\n")
        return EXIT_OK

    guarded(body, error_format)


def _validate(result: "Migration", config: str | None, namespace: str | None) -> None:
    """The migrated files as ``render`` reads them, through the driver: nothing is written unless they compile."""
    from ..driver import compile
    from ..inputs.gather import assemble, config_documents
    from ..inputs.parse import parse_text

    docs = [d for f in result.files for d in parse_text(f.new_text, f.file)]
    compile(assemble(docs, config_documents(config) if config else None), compile_options(namespace))


def write_all(files: Sequence[tuple[str, str, str]]) -> None:
    """Replace each ``(path, old, new)`` file's text with ``new``: all of them, or (on an error) none."""
    staged: list[tuple[str, str]] = []
    try:
        for path, _old, new in files:
            staged.append((_stage(path, new), path))
    except BaseException:
        for tmp, _path in staged:
            _remove(tmp)
        raise
    done: list[int] = []
    try:
        for i, (tmp, path) in enumerate(staged):
            os.replace(tmp, path)
            done.append(i)
    except BaseException:
        for i, (tmp, path) in enumerate(staged):
            if i in done:
                os.replace(_stage(path, files[i][1]), path)  # put the original text back
            else:
                _remove(tmp)
        raise


def _stage(path: str, text: str) -> str:
    """A temporary file beside ``path`` holding ``text``, with ``path``'s permissions, flushed to disk."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".migrate", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def register(app: typer.Typer) -> None:
    app.command()(migrate)
