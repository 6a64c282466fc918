"""Exit codes and the one mapping from exceptions to them (kubectl's conventions).

0 ok; 1 invalid input, an apply error, or (diff) differences found; 2 usage, or a missing optional part;
3 internal error (a bug: never a user's mistake); 4 (``apply --wait``) readiness failed or timed out;
130 interrupted; 141 the reader of the output went away (as coreutils, killed by SIGPIPE). A command body raises; :func:`guarded` prints one line (or the problem list) and exits.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import Enum

import typer

from ..errors import CompileError, InputError, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL, EXIT_WAIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command killed by SIGPIPE (128 + 13), as coreutils end
EXIT_DIFF_FAILED = 2  # kubectl diff: any status above 1 means the diff itself failed


class ErrorFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


def report(problems, error_format: ErrorFormat = ErrorFormat.text) -> None:
    """Problems to stderr in the chosen format (GitHub annotations for CI logs).

    In text, a warning or note that repeats (the same message at the same field of many objects) is printed once,
    with how many more objects it concerns; errors are always printed one by one.
    """
    import json

    if error_format is ErrorFormat.text:
        for p, more in _grouped(problems):
            also = f" (and {more} more like it)" if more else ""
            sys.stderr.write(p.format() + also + "\n")
        return
    for p in problems:
        if error_format is ErrorFormat.json:
            fields = ("severity", "file", "line", "col", "kind", "name", "path", "message")
            sys.stderr.write(json.dumps({k: getattr(p, k) for k in fields}) + "\n")
        else:
            level = "error" if p.severity == "error" else ("notice" if p.severity == "note" else "warning")
            where = f"file={p.file},line={p.line or 1},col={p.col or 1}"
            title = f"{p.object_ref} {p.path}".strip()
            sys.stderr.write(f"::{level} {where},title={title}::{p.message}\n")


def _grouped(problems):
    """(first problem, how many more) per distinct warning; each error on its own, in order."""
    counts: dict[tuple, int] = {}
    firsts: list = []
    for p in problems:
        key = (p.severity, p.path, p.message) if p.severity != "error" else (id(p),)
        if key not in counts:
            counts[key] = 0
            firsts.append((key, p))
        else:
            counts[key] += 1
    return [(p, counts[key]) for key, p in firsts]


def _exit_for(exc: BaseException, error_format: ErrorFormat) -> int:
    """The exit code for an exception, having said why on stderr."""
    if isinstance(exc, CompileError):
        report(exc.problems, error_format)
        return EXIT_INVALID
    if isinstance(exc, InputError):
        sys.stderr.write(f"{exc}\n")
        return EXIT_INVALID
    if isinstance(exc, UsageError):
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    if isinstance(exc, FileNotFoundError):
        sys.stderr.write(f"error: no such file or directory: {exc.filename or exc}\n")
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):  # the reader of our output went away (`| head`): nothing to say
        return EXIT_BROKEN_PIPE
    missing = exc if isinstance(exc, ImportError) else exc.__cause__  # SchemaCheckUnavailable wraps one
    if isinstance(missing, ImportError) and (hint := missing_part_hint(missing)):
        sys.stderr.write(f"error: {hint}\n")
        return EXIT_USAGE
    code = _extra_exit(exc)
    if code is not None:
        return code
    if os.environ.get("KSERVE_COMPILE_DEBUG"):
        raise exc
    sys.stderr.write(
        f"internal error: {type(exc).__name__}: {exc} (please report this; KSERVE_COMPILE_DEBUG=1 shows the traceback)\n"
    )
    return EXIT_INTERNAL


# Top-level modules of optional parts → what to install. The kubernetes client and the schemas are dependencies
# of every install; a missing one means a broken or partial install, so the fix is to reinstall.
MISSING_PART_INSTALL: dict[str, str] = {
    "onnxruntime": "pip install 'kserve-compile[server]'",
    "starlette": "pip install 'kserve-compile[server]'",
    "uvicorn": "pip install 'kserve-compile[server]'",
    "numpy": "pip install 'kserve-compile[server]'",
    "grpc": "pip install 'kserve-compile[server]'",
    "prometheus_client": "pip install 'kserve-compile[server]'",
    "kubernetes": "pip install --force-reinstall kserve-compile",
    "kubernetes_validate": "pip install --force-reinstall kserve-compile",
    "jsonschema": "pip install --force-reinstall kserve-compile",
}


def missing_part_hint(exc: ImportError) -> str | None:
    """``"<module> is not installed: pip install ..."`` for a module of an optional part, else None."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    command = MISSING_PART_INSTALL.get(name)
    return f"the Python package {name!r} is not installed; run: {command}" if command else None


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


def guarded(body: Callable[[], int | None], error_format: ErrorFormat = ErrorFormat.text, quiet: bool = False) -> None:
    """Run a command body and exit with its code; every failure becomes a message and a code, never a traceback.

    ``quiet`` drops the warnings and notes that come with a failure's errors."""
    try:
        code = body() or EXIT_OK
    except typer.Exit:
        raise
    except CompileError as exc:
        code = _exit_for(
            CompileError([p for p in exc.problems if p.severity == "error"]) if quiet else exc, error_format
        )
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the CLI's last line of defence
        code = _exit_for(exc, error_format)
    raise typer.Exit(code)
