"""The typer app: every command module registers its commands on it.

The command modules do without ``from __future__ import annotations``: typer reads the annotations of every
command on each run, and evaluating them from strings cost ~6 ms of a one-isvc render.
"""

import os
import sys
from importlib import import_module

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


# Each command and the module that registers it, in the order ``--help`` lists them. A run registers only the module
# of the command it names (typer builds every registered command on each run); anything else registers them all.
COMMAND_MODULES: dict[str, str] = {
    "render": ".compile_commands",
    "status": ".compile_commands",
    "validate": ".compile_commands",
    "explain": ".explain_command",
    "migrate": ".migrate_command",
    "diff": "..apply.cli",
    "apply": "..apply.cli",
    "daemon": "..apply.cli",
    "graph": ".graph_command",
    "fn": ".krm_command",
}
_registered: set[str] = set()


def register(*modules: str) -> typer.Typer:
    """The app with the commands of ``modules`` (every module when none are named) registered, once each."""
    for module in modules or dict.fromkeys(COMMAND_MODULES.values()):
        if module not in _registered:
            _registered.add(module)
            import_module(module, __package__).register(app)
    return app


def main() -> None:
    """The console script."""
    if os.environ.get("NO_COLOR"):  # https://no-color.org: no colour or styling, whatever else asks for it
        os.environ.pop("FORCE_COLOR", None)
        os.environ["TERM"] = "dumb"
    named = COMMAND_MODULES.get(sys.argv[1]) if len(sys.argv) > 1 else None
    register(*([named] if named else []))
    app(prog_name="kserve-compile")
