"""Exit codes and the one mapping from exceptions to them (kubectl's conventions).

0 ok; 1 invalid input, an apply error, or (diff) differences found; 2 usage, or a missing optional part;
3 internal error (a bug: never a user's mistake); 4 (``apply --wait``) readiness failed or timed out;
130 interrupted. A command body raises; :func:`guarded` prints one line (or the problem list) and exits.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import Enum

import typer

from ..errors import CompileError, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL, EXIT_WAIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


class ErrorFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


def report(problems, error_format: ErrorFormat = ErrorFormat.text) -> None:  # type: ignore[no-untyped-def]
    """Problems to stderr in the chosen format (GitHub annotations for CI logs)."""
    import json

    for p in problems:
        if error_format is ErrorFormat.json:
            fields = ("severity", "file", "line", "col", "kind", "name", "path", "message")
            sys.stderr.write(json.dumps({k: getattr(p, k) for k in fields}) + "\n")
        elif error_format is ErrorFormat.github:
            level = "error" if p.severity == "error" else "warning"
            where = f"file={p.file},line={p.line or 1},col={p.col or 1}"
            title = f"{p.object_ref} {p.path}".strip()
            sys.stderr.write(f"::{level} {where},title={title}::{p.message}\n")
        else:
            sys.stderr.write(p.format() + "\n")


def _exit_for(exc: BaseException, error_format: ErrorFormat) -> int:
    """The exit code for an exception, having said why on stderr."""
    if isinstance(exc, CompileError):
        report(exc.problems, error_format)
        return EXIT_INVALID
    if isinstance(exc, UsageError):
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    if isinstance(exc, FileNotFoundError):
        sys.stderr.write(f"error: no such file or directory: {exc.filename or exc}\n")
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    code = _extra_exit(exc)
    if code is not None:
        return code
    if os.environ.get("KSERVE_COMPILE_DEBUG"):
        raise exc
    sys.stderr.write(
        f"internal error: {type(exc).__name__}: {exc} (please report this; KSERVE_COMPILE_DEBUG=1 shows the traceback)\n"
    )
    return EXIT_INTERNAL


# Exceptions of optional parts (the apply loop's), registered by them so this module imports none of them.
_EXTRA_EXITS: list[tuple[type[BaseException], int, Callable[[BaseException], str]]] = []


def register_exit(exc_type: type[BaseException], code: int, message: Callable[[BaseException], str] = str) -> None:
    """Map ``exc_type`` (and its subclasses) to ``code``, printing ``message(exc)`` on stderr."""
    _EXTRA_EXITS.append((exc_type, code, message))


def _extra_exit(exc: BaseException) -> int | None:
    for exc_type, code, message in _EXTRA_EXITS:
        if isinstance(exc, exc_type):
            sys.stderr.write(message(exc).rstrip("\n") + "\n")
            return code
    return None


def guarded(body: Callable[[], int | None], error_format: ErrorFormat = ErrorFormat.text) -> None:
    """Run a command body and exit with its code; every failure becomes a message and a code, never a traceback."""
    try:
        code = body() or EXIT_OK
    except typer.Exit:
        raise
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the CLI's last line of defence
        code = _exit_for(exc, error_format)
    raise typer.Exit(code)
