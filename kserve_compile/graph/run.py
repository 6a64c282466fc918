"""Run an InferenceGraph on this machine: ``kserve-compile graph run graph.yaml [isvc.yaml …]``.

KServe has no local mode for graphs; this one resolves the graph as its controller does (``serviceName`` steps get
the isvc's predict path for its protocol and model name: ``pkg/controller/v1alpha1/inferencegraph/controller.go``,
``GetPredictorEndpoint``), points every step at a local server, and serves the graph with :mod:`router` (the port
of ``cmd/router``) in this process.

Where a step goes:

* ``--backend NAME=URL``: ``NAME`` is an InferenceService name (a ``serviceName`` step) or the host, or the host's
  first DNS label, of a ``serviceUrl`` step. A ``URL`` with no path is a base: the step keeps its predict path (the
  isvc's, or the ``serviceUrl``'s path and query); a ``URL`` with a path is used exactly.
* ``--model NAME=PATH``, or an isvc input whose ``storageUri`` is a local path (``file://…`` or a path): a
  ``python -m server`` is started on 127.0.0.1 with that ONNX model (a ``model.onnx`` directory or a ``.onnx``
  file) under the isvc's model name.
* Any other ``serviceName`` step is an error naming it; another ``serviceUrl`` step is called as written, with a
  note when its host is not local.

The graph's retries (``spec.defaultRetry``, a step's ``retry`` or the ``kserve-compile.io/router-retry``
annotation) reach the router in the graph JSON, as on a cluster; when serving (no ``--data``), a graph annotated
``serving.kserve.io/enable-prometheus-scraping: "true"`` gets ``/metrics`` on a free port (the inferenceservice-config
default is not consulted here), and ``kserve-compile.io/router-max-inflight`` its limit (:mod:`kserve_compile.graph.router_options`).

The plan (:func:`plan_local`, over what the driver compiled) is pure; :func:`run_local` starts the servers and the
router.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from .. import constants as C
from ..errors import CompileError, InputError, Problem, UsageError
from ..inputs.parse import Document
from .graph_types import GraphSpec, InferenceGraph
from .render import graph_json
from .router_options import RouterOptions, router_options, with_retries
from .targets import IsvcTarget, predict_path
from .validation import validate_graph

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
SERVER_READY_TIMEOUT_S = 120.0
BODY_PREVIEW_CHARS = 2000


@dataclass(frozen=True)
class LocalModel:
    """A ``python -m server`` to start for an InferenceService."""

    isvc: str
    model_dir: str
    model_name: str
    port: int


@dataclass(frozen=True)
class LocalPlan:
    graph: InferenceGraph
    spec: GraphSpec  # every step's serviceUrl pointing where it will be called
    models: tuple[LocalModel, ...]
    notes: tuple[str, ...]
    propagate_headers: tuple[str, ...]
    options: RouterOptions = RouterOptions(metrics=False, max_inflight=0)

    @property
    def graph_json(self) -> str:
        """The ``--graph-json`` KServe's controller would give the router, with the local URLs."""
        return graph_json(self.spec)


def parse_pairs(values: Sequence[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options; a malformed one is a usage error naming the option."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, target = value.partition("=")
        if not sep or not name or not target:
            raise UsageError(f"{option} takes NAME=VALUE, got {value!r}")
        out[name] = target
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pick_graph(
    graphs: Sequence[tuple[InferenceGraph, Document]], name: str | None = None
) -> tuple[InferenceGraph, Document]:
    """The graph to run or draw among the compiled inputs' (``name`` picks one of several), validated."""
    found = [(g, d) for g, d in graphs if name is None or g.metadata.name == name]
    if len(found) != 1:
        names = ", ".join(sorted(g.metadata.name for g, _ in graphs)) or "none"
        wanted = f'named "{name}" ' if name else ""
        hint = "" if name or len(found) == 0 else "; choose one with --name"
        raise UsageError(f"expected one InferenceGraph {wanted}among the inputs, found: {names}{hint}")
    graph, doc = found[0]
    try:
        validate_graph(graph)
    except InputError as exc:
        raise CompileError([doc.problem(exc.message, exc.path)]) from None
    return graph, doc


IsvcTargets = Mapping[str, tuple[IsvcTarget, Any, Document]]  # isvc name → its target, defaulted isvc, document


def plan_local(
    graph: InferenceGraph,
    doc: Document,
    targets: IsvcTargets,
    propagate_headers: Sequence[str],
    backends: Mapping[str, str],
    models: Mapping[str, str],
    *,
    port_for: Callable[[], int] = free_port,
) -> LocalPlan:
    """Where each step of the graph goes; raises :class:`CompileError` naming every step that has nowhere to go."""
    problems: list[Problem] = []
    started: dict[str, LocalModel] = {}
    notes: list[str] = []
    nodes = {}
    for node_name, node in (graph.spec.nodes or {}).items():
        steps = []
        for i, step in enumerate(node.steps or []):
            path = f"spec.nodes.{node_name}.steps[{i}]"
            try:
                url = _step_url(step, backends, models, targets, started, port_for, notes)
            except InputError as exc:
                problems.append(doc.problem(exc.message, f"{path}.{exc.path}"))
                continue
            steps.append(step.model_copy(update={"service_url": url}) if url != step.service_url else step)
        nodes[node_name] = node.model_copy(update={"steps": steps if node.steps is not None else None})
    unused = sorted(set(backends) - _names_used(graph))
    notes += [f"--backend {n}: no step of the graph uses it" for n in unused]
    if problems:
        raise CompileError(problems)
    try:
        spec = with_retries(graph, graph.spec.model_copy(update={"nodes": nodes}))
        options = router_options(graph)
    except InputError as exc:
        raise CompileError([doc.problem(exc.message, exc.path)]) from None
    return LocalPlan(graph, spec, tuple(started.values()), tuple(notes), tuple(propagate_headers), options)


def _step_url(
    step: Any,
    backends: Mapping[str, str],
    models: Mapping[str, str],
    targets: Mapping[str, tuple[IsvcTarget, Any, Document]],
    started: dict[str, LocalModel],
    port_for: Callable[[], int],
    notes: list[str],
) -> str:
    if step.node_name:
        return ""
    if step.service_name:
        return _service_name_url(step.service_name, backends, models, targets, started, port_for)
    return _service_url(step.service_url, backends, notes)


def _service_name_url(
    isvc: str,
    backends: Mapping[str, str],
    models: Mapping[str, str],
    targets: Mapping[str, tuple[IsvcTarget, Any, Document]],
    started: dict[str, LocalModel],
    port_for: Callable[[], int],
) -> str:
    known = targets.get(isvc)
    target = known[0] if known else IsvcTarget("", C.PROTOCOL_V1, isvc)
    path = predict_path(target.model_name, target.protocol)
    if isvc in backends:
        return _join(backends[isvc], path)
    model_path = models.get(isvc) or (_local_storage(known) if known else None)
    if model_path is None:
        given = (
            "the InferenceService is not among the inputs" if known is None else "its storageUri is not a local path"
        )
        raise InputError(
            f'step names InferenceService "{isvc}", which has no local backend ({given}): '
            f"pass --backend {isvc}=URL or --model {isvc}=PATH/TO/model.onnx",
            "serviceName",
        )
    if isvc not in started:
        started[isvc] = LocalModel(isvc, _model_dir(model_path), target.model_name, port_for())
    return f"http://127.0.0.1:{started[isvc].port}{path}"


def _service_url(url: str, backends: Mapping[str, str], notes: list[str]) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    for key in (parts.netloc, host, host.split(".")[0]):
        if key and key in backends:
            tail = urlunsplit(("", "", parts.path, parts.query, ""))
            return _join(backends[key], tail)
    if host not in LOCAL_HOSTS:
        notes.append(
            f"step URL {url} is not local; pass --backend {host.split('.')[0]}=URL to point it at a local server"
        )
    return url


def _join(backend: str, path: str) -> str:
    """A backend with a path is the exact URL; one without is a base for ``path``."""
    parts = urlsplit(backend)
    if parts.path not in ("", "/") or parts.query:
        return backend
    return backend.rstrip("/") + path


def _local_storage(known: tuple[IsvcTarget, Any, Document]) -> str | None:
    """The isvc's ``storageUri`` when it names a local file or directory (relative to the isvc's file)."""
    model = known[1].spec.predictor.model
    uri = getattr(model, "storage_uri", None) if model is not None else None
    if not uri or ("://" in uri and not uri.startswith("file://")):
        return None
    path = Path(uri.removeprefix("file://"))
    if not path.is_absolute() and known[2].file not in ("", "-"):
        path = Path(known[2].file).parent / path
    return str(path)


def _model_dir(path: str) -> str:
    """``python -m server --model_dir`` wants a directory holding ``model.onnx``."""
    p = Path(path)
    if p.is_dir():
        return str(p)
    if p.suffix == ".onnx" and p.is_file():
        if p.name == "model.onnx":
            return str(p.parent)
        link_dir = Path(tempfile.mkdtemp(prefix="kserve-compile-graph-"))
        (link_dir / "model.onnx").symlink_to(p.resolve())
        return str(link_dir)
    raise InputError(f"{path}: no such ONNX model (a model.onnx directory or a .onnx file)", "serviceName")


def _names_used(graph: InferenceGraph) -> set[str]:
    names: set[str] = set()
    for node in (graph.spec.nodes or {}).values():
        for step in node.steps or []:
            if step.service_name:
                names.add(step.service_name)
            elif step.service_url:
                parts = urlsplit(step.service_url)
                host = parts.hostname or ""
                names.update({parts.netloc, host, host.split(".")[0]})
    return names


# --- running ------------------------------------------------------------------------------------------------------


def start_models(models: Sequence[LocalModel], err: IO[str]) -> list[subprocess.Popen[bytes]]:
    """Start one ``python -m server`` per model and wait until each is ready; stops them all on failure."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for m in models:
            argv = [
                sys.executable,
                "-m",
                "server",
                "--model_dir",
                m.model_dir,
                "--model_name",
                m.model_name,
                "--http_port",
                str(m.port),
                "--enable_grpc",
                "false",
                "--host",
                "127.0.0.1",
                "--workers",
                "1",
            ]
            err.write(f"starting model server for InferenceService {m.isvc}: {m.model_dir} on port {m.port}\n")
            procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for m, proc in zip(models, procs):
            _wait_ready(m, proc)
    except BaseException:
        stop_models(procs)
        raise
    return procs


def _wait_ready(model: LocalModel, proc: subprocess.Popen[bytes]) -> None:
    url = f"http://127.0.0.1:{model.port}/v2/health/ready"
    deadline = time.monotonic() + SERVER_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace").strip().splitlines()[-5:]
            raise UsageError(
                f"the model server for InferenceService {model.isvc} exited ({proc.returncode}): " + " | ".join(tail)
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise UsageError(
        f"the model server for InferenceService {model.isvc} was not ready within {SERVER_READY_TIMEOUT_S:.0f}s"
    )


def stop_models(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def trace_printer(err: IO[str]) -> Callable[[Any], None]:
    """``--trace``: one block per executed step (the router's :class:`router.TraceEvent`)."""

    def show(event: Any) -> None:
        label = f"{event.node}[{event.index}]" + (f' "{event.step.name}"' if event.step.name else "")
        outcome = f"{event.status}" if not event.error else f"failed: {event.error}"
        err.write(f"trace: {label} -> {event.target}: {outcome} in {event.seconds * 1000:.1f} ms{_attempt(event)}\n")
        err.write(f"  request:  {_preview(event.request)}\n")
        if not event.error:
            err.write(f"  response: {_preview(event.response)}\n")
        err.flush()

    return show


def _attempt(event: Any) -> str:
    """`` (attempt 1 of 4; retrying in 96 ms)`` for a step with a retry policy; nothing otherwise."""
    if not event.attempts:
        return ""
    text = f" (attempt {event.attempt} of {event.attempts}"
    if event.retry_in is not None:
        text += f"; retrying in {event.retry_in * 1000:.0f} ms"
    elif event.no_retry:
        text += f"; not retried: {event.no_retry}"
    return text + ")"


def _preview(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace")
    if len(text) > BODY_PREVIEW_CHARS:
        return text[:BODY_PREVIEW_CHARS] + f"… ({len(body)} bytes)"
    return text


async def run_local(
    plan: LocalPlan,
    *,
    port: int,
    data: bytes | None,
    headers: Sequence[tuple[str, str]],
    trace: bool,
    out: IO[str],
    err: IO[str],
) -> int:
    """Serve the graph on ``port`` until interrupted, or (``data``) send one request, print the answer and exit
    0 for a 2xx status, 1 otherwise."""
    from router import Router, parse_graph
    from router.client import ServiceClient, compile_patterns
    from router.metrics import RouterMetrics
    from router.server import RouterServer

    graph = parse_graph(plan.graph_json)
    patterns, _ = compile_patterns(plan.propagate_headers)
    serving_metrics = plan.options.metrics and data is None
    router = Router(
        graph,
        ServiceClient(graph.timeouts.service_client),
        patterns,
        tracer=trace_printer(err) if trace else None,
        metrics=RouterMetrics(graph) if serving_metrics else None,
    )
    if data is not None:
        await router.client.start()
        try:
            status, body, _ = await router.handle(data, headers)
        finally:
            await router.client.close()
        err.write(f"status: {status}\n")
        out.write(body.decode("utf-8", errors="replace") + "\n")
        return 0 if 200 <= status <= 299 else 1
    server = RouterServer(
        router,
        graph.timeouts,
        drain_seconds=0,
        max_inflight=plan.options.max_inflight,
        metrics_port=0 if serving_metrics else None,
    )
    bound = await server.start("127.0.0.1", port)
    err.write(f"InferenceGraph {plan.graph.metadata.name} on http://127.0.0.1:{bound} (Ctrl-C stops it)\n")
    if serving_metrics:
        err.write(f"metrics on http://127.0.0.1:{server.metrics_port}/metrics\n")
    if plan.options.max_inflight:
        err.write(f"at most {plan.options.max_inflight} requests in flight; more are answered 503\n")
    err.flush()
    await server.serve()
    return 0
