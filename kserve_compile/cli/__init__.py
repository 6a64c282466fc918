"""kserve-compile's command line: with ``apply/`` and ``server/``, the only code that reads files, prints or exits.

Each command module registers its commands on one typer app; heavy parts (the compiler, the kubernetes client)
load inside the commands, so ``--help`` and a one-isvc ``render`` start fast.
"""

from __future__ import annotations

import typer

from .. import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Compile KServe InferenceServices into the Kubernetes objects KServe would create — no cluster needed.",
)


def _register_commands() -> None:
    from ..apply.cli import register as register_apply
    from .compile_commands import register as register_compile
    from .explain_command import register as register_explain
    from .graph_command import register as register_graph
    from .migrate_command import register as register_migrate

    register_compile(app)
    register_explain(app)
    register_migrate(app)
    register_apply(app)
    register_graph(app)


_register_commands()


def main() -> None:
    app(prog_name="kserve-compile")


__all__ = ["app", "main", "__version__"]
