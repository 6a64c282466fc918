"""kserve-compile's command line: with ``apply/`` and ``server/``, the only code that reads files, prints or exits.

Each command module registers its commands on one typer app; heavy parts (the compiler, the kubernetes client)
load inside the commands, so ``--help`` and a one-isvc ``render`` start fast.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any, NoReturn

_SHORT_LIVED = frozenset({"render", "validate", "status", "explain", "migrate", "diff", "fn"})


def main() -> None:
    """The console script (``kserve-compile``)."""
    # Before the first import: the short-lived commands pay for the cyclic garbage collector (most of it while
    # classes are built at import) and gain nothing from it; daemon, apply --wait and graph run keep it.
    short_lived = len(sys.argv) > 1 and sys.argv[1] in _SHORT_LIVED
    if short_lived:
        gc.disable()
    # pydantic looks for plugins through every installed distribution's entry points (importlib.metadata, ~10 ms
    # of a one-isvc render); a CLI has no use for them. An explicit setting, even an empty one, wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from .app import main as run

    if not short_lived:
        run()
        return
    try:
        run()
    except SystemExit as exc:
        _exit_now(_exit_code(exc))
    _exit_now(0)


def _exit_code(exc: SystemExit) -> int:
    """The status ``sys.exit`` would give (a message is printed, as the interpreter would print it)."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def _exit_now(code: int) -> NoReturn:
    """End a short-lived command without the interpreter's teardown, which collects and frees every object and module
    once more: ~30 ms of a one-isvc render. Its files are closed by then; only the standard streams need a flush."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader has gone (``| head``), or the stream is closed
            pass
    os._exit(code)


def __getattr__(name: str) -> Any:
    # ``kserve_compile.cli.app`` (the typer app) loads on first use, so that a command module (or apply/) can
    # import ``cli.exits`` without importing every other command first.
    if name == "app":
        from .app import register

        return register()
    raise AttributeError(name)


__all__ = ["app", "diff_offline", "exits", "main", "options"]
