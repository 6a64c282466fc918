"""The typer app: every command module registers its commands on it.

The command modules do without ``from __future__ import annotations``: typer reads the annotations of every
command on each run, and evaluating them from strings cost ~6 ms of a one-isvc render.
"""

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
    from .explain_command import register as register_explain
    from .graph_command import register as register_graph
    from .krm_command import register as register_fn
    from .migrate_command import register as register_migrate

    register_compile(app)
    register_explain(app)
    register_migrate(app)
    register_apply(app)
    register_graph(app)
    register_fn(app)


_register_commands()


def main() -> None:
    """The console script."""
    if os.environ.get("NO_COLOR"):  # https://no-color.org: no colour or styling, whatever else asks for it
        os.environ.pop("FORCE_COLOR", None)
        os.environ["TERM"] = "dumb"
    app(prog_name="kserve-compile")
