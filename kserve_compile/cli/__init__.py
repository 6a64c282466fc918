"""kserve-compile's command line: with ``apply/`` and ``server/``, the only code that reads files, prints or exits.

Each command module registers its commands on one typer app; heavy parts (the compiler, the kubernetes client)
load inside the commands, so ``--help`` and a one-isvc ``render`` start fast.
"""

from __future__ import annotations

from typing import Any


def main() -> None:
    """The console script (``kserve-compile``)."""
    from .app import main as run

    run()


def __getattr__(name: str) -> Any:
    # ``kserve_compile.cli.app`` (the typer app) loads on first use, so that a command module (or apply/) can
    # import ``cli.exits`` without importing every other command first.
    if name == "app":
        from .app import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
