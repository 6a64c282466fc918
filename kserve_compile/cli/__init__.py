"""kserve-compile's command line: with ``apply/`` and ``server/``, the only code that reads files, prints or exits.

Each command module registers its commands on one typer app; heavy parts (the compiler, the kubernetes client)
load inside the commands, so ``--help`` and a one-isvc ``render`` start fast.
"""

from __future__ import annotations

import os

import typer

from .. import __version__

app = typer.Typer(
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish and PowerShell
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Compile KServe InferenceServices into the Kubernetes objects KServe would create — no cluster needed.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"kserve-compile {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Compile KServe InferenceServices into the Kubernetes objects KServe would create — no cluster needed."""


def _register_commands() -> None:
    from ..apply.cli import register as register_apply
    from .compile_commands import register as register_compile
    from .krm_command import register as register_fn

    register_compile(app)
    register_apply(app)
    register_fn(app)


_register_commands()


def main() -> None:
    if os.environ.get("NO_COLOR"):  # https://no-color.org: no colour or styling, whatever else asks for it
        os.environ.pop("FORCE_COLOR", None)
        os.environ["TERM"] = "dumb"
    app(prog_name="kserve-compile")


__all__ = ["__version__", "app", "main"]
