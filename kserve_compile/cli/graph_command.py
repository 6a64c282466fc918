"""``kserve-compile graph run`` and ``graph show``; ``register(app)`` adds the ``graph`` group to the main app.

Only typer and the standard library load at import; the graph code (and the router, for ``run``) load inside the
commands. Exit codes as the other commands: 0 ok; 1 invalid input (or, with ``run --data``, a non-2xx answer);
2 usage; 3 internal error; 130 interrupted.
"""

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from .exits import ErrorFormat, guarded
from .options import CONFIG, ERROR_FORMAT, NAMESPACE, POD_WEBHOOK, PodWebhook, compile_options

if TYPE_CHECKING:
    from ..driver import Result
    from ..graph.graph_types import InferenceGraph
    from ..graph.run import LocalPlan
    from ..inputs.parse import Document


def _request_body(data: str) -> bytes:
    """``--data``: JSON text, ``@FILE``, or ``@-`` for stdin."""
    from ..errors import UsageError

    if not data.startswith("@"):
        return data.encode()
    if data == "@-":
        return sys.stdin.buffer.read()
    try:
        with open(data[1:], "rb") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"--data {data}: {exc.strerror or exc}") from None


def _headers(values: list[str]) -> list[tuple[str, str]]:
    from ..errors import UsageError

    out = []
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"-H takes 'Name: value', got {value!r}")
        out.append((name.strip(), rest.strip()))
    return out


def _compiled_graph(
    files: list[str],
    name: str | None,
    config: str | None = None,
    namespace: str | None = None,
    pod_webhook: PodWebhook = PodWebhook.inline,
) -> "tuple[Result, InferenceGraph, Document]":
    """The inputs compiled by the driver, and the graph among them to run or draw."""
    from ..driver import compile
    from ..graph.run import pick_graph
    from ..inputs.gather import read_inputs

    result = compile(read_inputs(files, config), compile_options(namespace, pod_webhook=pod_webhook))
    graph, doc = pick_graph(result.graphs, name)
    return result, graph, doc


def plan_for(
    files: list[str],
    backends: dict[str, str],
    models: dict[str, str],
    name: str | None = None,
    port_for: "Callable[[], int] | None" = None,
    config: str | None = None,
    namespace: str | None = None,
    pod_webhook: PodWebhook = PodWebhook.inline,
) -> "LocalPlan":
    """Where each step of the graph among ``files`` goes (``graph run``): the isvcs of the graph's namespace reached
    through what the driver compiled for them."""
    from ..graph.run import free_port, plan_local

    result, graph, doc = _compiled_graph(files, name, config, namespace, pod_webhook)
    targets = result.isvc_targets()
    isvcs = {
        c.plan.isvc.metadata.name: (targets[key], c.plan.isvc, c.doc)
        for c in result.isvcs
        if (key := (c.plan.isvc.metadata.namespace, c.plan.isvc.metadata.name))[0] == graph.namespace
    }
    assert result.context is not None
    propagate = (result.context.config.router.headers or {}).get("propagate") or ()
    return plan_local(graph, doc, isvcs, propagate, backends, models, port_for=port_for or free_port)


def run_command(
    files: Annotated[
        list[str],
        typer.Argument(help="The InferenceGraph and the InferenceServices it names (files, directories or -)."),
    ],
    backend: Annotated[
        list[str] | None,
        typer.Option("--backend", "-b", help="NAME=URL: the isvc (or serviceUrl host) NAME is served at URL."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="NAME=PATH: start python -m server with this ONNX model for isvc NAME."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The InferenceGraph to run when the inputs hold several.")
    ] = None,
    port: Annotated[int, typer.Option("--port", help="Port the graph is served on (127.0.0.1).")] = 8080,
    data: Annotated[
        str | None, typer.Option("--data", "-d", help="Send one request (JSON, @FILE or @-), print the answer, exit.")
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("-H", "--header", help="'Name: value' header of the --data request.")
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="Print each step's request, response, status and time (stderr).")
    ] = False,
    config: str | None = CONFIG,
    namespace: str | None = NAMESPACE,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
) -> None:
    """Run an InferenceGraph on this machine, its steps pointed at local model servers."""

    def body() -> int:
        import asyncio

        from ..errors import UsageError
        from ..graph import run as local

        try:
            import httptools  # noqa: F401 - the router's HTTP server and step client (the "router" extra)
        except ImportError as exc:
            raise UsageError(
                f"graph run needs the router's dependencies: pip install 'kserve-compile[router]' ({exc})"
            ) from None
        request = _request_body(data) if data is not None else None
        backends, models = local.parse_pairs(backend or [], "--backend"), local.parse_pairs(model or [], "--model")
        plan = plan_for(files, backends, models, name, config=config, namespace=namespace, pod_webhook=pod_webhook)
        for note in plan.notes:
            sys.stderr.write(f"note: {note}\n")
        procs = local.start_models(plan.models, sys.stderr)
        try:
            return asyncio.run(
                local.run_local(
                    plan,
                    port=port,
                    data=request,
                    headers=_headers(header or []),
                    trace=trace,
                    out=sys.stdout,
                    err=sys.stderr,
                )
            )
        finally:
            local.stop_models(procs)

    guarded(body, error_format)


def show_command(
    files: Annotated[list[str], typer.Argument(help="Files or directories holding the InferenceGraph (or -).")],
    output: Annotated[str, typer.Option("-o", "--output", help="mermaid or svg.")] = "mermaid",
    name: Annotated[
        str | None, typer.Option("--name", help="The InferenceGraph to draw when the inputs hold several.")
    ] = None,
    config: str | None = CONFIG,
    namespace: str | None = NAMESPACE,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
) -> None:
    """Draw an InferenceGraph: nodes, router types, weights, conditions, Hard/Soft dependencies."""

    def body() -> int:
        from ..errors import UsageError
        from ..graph.show import FORMATS

        draw = FORMATS.get(output)
        if draw is None:
            raise UsageError(f"unknown output format {output!r}: use {' or '.join(sorted(FORMATS))}")
        _, graph, _ = _compiled_graph(files, name, config, namespace, pod_webhook)
        sys.stdout.buffer.write(draw(graph).encode("utf-8"))
        sys.stdout.flush()
        return 0

    guarded(body, error_format)


def register(app: typer.Typer) -> None:
    graph_app = typer.Typer(no_args_is_help=True, help="Run or draw an InferenceGraph locally.")
    graph_app.command("run")(run_command)
    graph_app.command("show")(show_command)
    app.add_typer(graph_app, name="graph")
