"""``diff``, ``apply`` and ``daemon`` commands; ``register(app)`` adds them to the main typer app.

Only typer and the standard library are imported here at module level: the kubernetes client and
the apply engine load inside the commands, so ``render`` starts fast.

Exit codes: 0 ok; 1 invalid input, apply error, an unreachable or refusing API server (as kubectl), or
(diff) changes found; 2 usage; 3 internal error (a bug: never a user's mistake); 4 (apply --wait) readiness
failed or timed out. Errors are matched by exception class in the CLI's one table (``cli/exits.py``). Time flags take
durations (``90s``, ``5m``, ``1h``; ``kserve_compile.durations``).
"""

import os
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

import typer

from kserve_compile import constants as C
from kserve_compile.cli.exits import (
    EXIT_DIFF_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WAIT,
    ErrorFormat,
    guarded,
    register_exit,
)
from kserve_compile.cli.options import ERROR_FORMAT, POD_WEBHOOK, QUIET, PodWebhook


def _err(message: str) -> None:
    typer.echo(message, err=True)


@cache
def _register_exits() -> None:
    """The apply loop's exceptions, added to the CLI's one exception → exit-code table (kubectl's codes: 1 for
    errors, 2 for usage). Called when a command runs, so the kubernetes client loads only then."""
    from kubernetes.config.config_exception import ConfigException

    from kserve_compile.apply.errors import ApplySetError
    from kserve_compile.apply.kube import ApiError, ClusterRefused, ClusterUnreachable
    from kserve_compile.durations import DurationError

    register_exit(DurationError, EXIT_USAGE, lambda e: f"error: {e}")
    register_exit(ConfigException, EXIT_USAGE, lambda e: f"error: cannot load cluster credentials: {e}")
    register_exit(ApplySetError, EXIT_INVALID)
    register_exit(ClusterUnreachable, EXIT_INVALID, lambda e: f"error: {getattr(e, 'message', e)}")
    register_exit(ClusterRefused, EXIT_INVALID, lambda e: f"error: {getattr(e, 'message', e)}")
    register_exit(ApiError, EXIT_INVALID, lambda e: f"error from the API server: {e}")


def _guard(body: Callable[[], int], error_format: ErrorFormat = ErrorFormat.text, quiet: bool = False) -> None:
    """Run a command body through the CLI's one guard (every failure → an exit code and a line, never a traceback)."""

    def run() -> int:
        _register_exits()
        return body()

    guarded(run, error_format, quiet)


def _check_kubeconfig(kubeconfig: str | None) -> None:
    """Say which kubeconfig was looked for when there is none (the client's own error names no path)."""
    from kserve_compile.errors import UsageError

    if kubeconfig is not None:
        if not os.path.isfile(kubeconfig):
            raise UsageError(f"--kubeconfig {kubeconfig}: no such file")
        return
    paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    looked = paths or [os.path.expanduser("~/.kube/config")]
    if not any(os.path.isfile(p) for p in looked):
        where = f"$KUBECONFIG ({os.environ['KUBECONFIG']})" if paths else looked[0]
        raise UsageError(f"no kubeconfig: {where} does not exist and this is not a pod in a cluster; pass --kubeconfig")


def _seconds(flag: str, value: str) -> float:
    from kserve_compile.durations import DurationError, parse_duration

    try:
        return parse_duration(value)
    except DurationError as err:
        raise DurationError(f"{flag}: {err}") from None


def _objects(files: list[str], rendered: bool, config: str | None, namespace: str) -> list[dict[str, Any]]:
    """The objects to send: FILES as they are (``--rendered``), or rendered as ``render -n NAMESPACE`` would."""
    if rendered:
        from kserve_compile.apply.manifests import read_manifests

        return read_manifests(files)
    from kserve_compile.api import CompileOptions, render_result

    return render_result(files, config, CompileOptions(namespace=None if namespace == "default" else namespace)).objects


def _kube(server: str | None, kubeconfig: str | None, context: str | None, in_cluster: bool = False) -> Any:
    from kserve_compile.apply import kube

    if not server and not in_cluster:
        _check_kubeconfig(kubeconfig)
    if server:
        return kube.Kube(kube.api_client_for_host(server))
    if in_cluster:
        return kube.Kube(kube.load_api_client(in_cluster=True), context="in-cluster")
    return kube.Kube(kube.load_api_client(kubeconfig, context), context=kube.current_context(kubeconfig, context))


_FILES = typer.Argument(..., help="Input files or directories ('-' = stdin).")
_RENDERED = typer.Option(False, "--rendered", help="FILES are already-rendered manifests; do not render them.")
_CONFIG = typer.Option(None, "--config", help="inferenceservice-config ConfigMap file (rendering only).")
_NS = typer.Option("default", "--namespace", "-n", help="Namespace for objects without one, and of the ApplySet.")
_KUBECONFIG = typer.Option(None, "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")
_CONTEXT = typer.Option(None, "--context", help="kubeconfig context.")
_SERVER = typer.Option(None, "--server", help="API server URL without credentials (testing).", hidden=True)
_APPLYSET = typer.Option("kserve-compile", "--applyset", help="ApplySet parent ConfigMap name (configmaps/NAME).")
_MANAGER = typer.Option(C.FIELD_MANAGER, "--field-manager", help="Server-side apply field manager.")


def _applyset_name(value: str) -> str:
    from kserve_compile.errors import UsageError

    name = value.split("/", 1)[1] if value.startswith(("configmaps/", "configmap/")) else value
    if "/" in name or not name:
        raise UsageError(f"--applyset must be NAME or configmaps/NAME, got {value!r}")
    return name


def diff_command(
    files: list[str] = _FILES,
    cluster: bool = typer.Option(False, "--cluster", help="Compare with the live cluster (server-side dry run)."),
    rendered: bool = _RENDERED,
    config: str | None = _CONFIG,
    namespace: str = _NS,
    applyset: str = _APPLYSET,
    field_manager: str = _MANAGER,
    kubeconfig: str | None = _KUBECONFIG,
    context: str | None = _CONTEXT,
    server: str | None = _SERVER,
    output: str = typer.Option("text", "-o", "--output", help="text (unified diffs) or json (a list of objects)."),
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Show what would change: two renders offline (A B), or FILES against the cluster (--cluster).

    Exit 0: no changes, 1: changes, 2 or more: error (as `kubectl diff`).
    """

    def body() -> int:
        if not cluster:  # render both sides (kserve_compile/cli/diff_offline.py)
            from kserve_compile.cli.diff_offline import offline_diff

            ns = None if namespace == "default" else namespace
            return offline_diff(files, config, ns, output, error_format, quiet)
        return _cluster_diff(
            files, rendered, config, namespace, applyset, field_manager, output, server, kubeconfig, context,
            error_format,
        )  # fmt: skip

    _guard(body, error_format, quiet)


def _cluster_diff(
    files: list[str],
    rendered: bool,
    config: str | None,
    namespace: str,
    applyset: str,
    field_manager: str,
    output: str,
    server: str | None,
    kubeconfig: str | None,
    context: str | None,
    error_format: ErrorFormat = ErrorFormat.text,
) -> int:
    """``diff --cluster`` (kserve_compile/apply/diff.py); every failure to compare exits 2, as ``kubectl diff``."""
    from kserve_compile.apply.diff import diff_cluster
    from kserve_compile.apply.kube import ApiError
    from kserve_compile.apply.report import ApplyOptions
    from kserve_compile.cli.exits import report
    from kserve_compile.emit.diff import OUTPUTS, format_diffs
    from kserve_compile.errors import CompileError, UsageError

    if output not in OUTPUTS:
        raise UsageError(f"-o/--output must be one of {', '.join(OUTPUTS)}, got {output!r}")
    try:
        objects = _objects(files, rendered, config, namespace)
    except CompileError as exc:  # invalid input: the diff failed, it did not find changes
        report(exc.problems, error_format)
        return EXIT_DIFF_FAILED
    opts = ApplyOptions(field_manager=field_manager, namespace=namespace, applyset=_applyset_name(applyset))
    try:
        result = diff_cluster(_kube(server, kubeconfig, context), objects, opts)
    except ApiError as err:  # unreachable or refusing server: the diff itself failed (kubectl diff: > 1)
        _err(f"error: {getattr(err, 'message', None) or err}")
        return EXIT_DIFF_FAILED
    typer.echo(format_diffs(result.diffs, output), nl=False)
    for e in result.errors:
        _err(f"error: {e}")
    if result.errors:
        return EXIT_DIFF_FAILED
    return EXIT_INVALID if result.diffs else EXIT_OK


def apply_command(
    files: list[str] = _FILES,
    rendered: bool = _RENDERED,
    config: str | None = _CONFIG,
    namespace: str = _NS,
    applyset: str = _APPLYSET,
    field_manager: str = _MANAGER,
    force_conflicts: bool = typer.Option(
        True, "--force-conflicts/--no-force-conflicts", help="Take ownership of fields other managers own."
    ),
    prune: bool = typer.Option(False, "--prune", help="Delete members of the ApplySet the render no longer has."),
    allow_mass_prune: bool = typer.Option(False, "--allow-mass-prune", help="Lift the mass-deletion guard."),
    recreate_on_immutable: bool = typer.Option(
        False, "--recreate-on-immutable", help="Delete and recreate objects whose immutable fields changed."
    ),
    dry_run: str = typer.Option("none", "--dry-run", help="none | server"),
    wait: bool = typer.Option(False, "--wait", help="Wait until every object is ready (kstatus)."),
    timeout: str = typer.Option(
        "5m", "--timeout", help="How long --wait waits (90s, 5m, 1h; a bare number is seconds)."
    ),
    kubeconfig: str | None = _KUBECONFIG,
    context: str | None = _CONTEXT,
    server: str | None = _SERVER,
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Server-side apply the rendered objects in stages; optionally prune and wait for readiness."""

    def body() -> int:
        if dry_run not in ("none", "server"):
            _err(f"error: --dry-run must be none or server, got {dry_run!r}")
            return EXIT_USAGE
        from kserve_compile.apply.apply import Applier
        from kserve_compile.apply.report import ApplyOptions
        from kserve_compile.apply.wait import wait_for

        wait_seconds = _seconds("--timeout", timeout)
        objects = _objects(files, rendered, config, namespace)
        kube = _kube(server, kubeconfig, context)
        opts = ApplyOptions(
            field_manager=field_manager,
            force=force_conflicts,
            dry_run=dry_run == "server",
            prune=prune,
            allow_mass_prune=allow_mass_prune,
            recreate_on_immutable=recreate_on_immutable,
            applyset=_applyset_name(applyset),
            namespace=namespace,
            progress=(lambda m: None) if quiet else (lambda m: _err(m)),
        )
        report = Applier(kube, opts).run(objects)
        for change in report.changes:
            if change.action not in ("created", "configured", "pruned"):  # those were printed as progress
                typer.echo(str(change))
            elif opts.dry_run:
                typer.echo(str(change))
        for e in report.errors:
            _err(f"error: {e}")
        if not report.ok:
            return EXIT_INVALID
        if not quiet:
            typer.echo(f"apply: {report.summary()}")
        if wait and not opts.dry_run:
            result = wait_for(kube, report.applied, wait_seconds, progress=(lambda m: None) if quiet else _err)
            if not result.ok:
                _err(("timed out waiting for: " if result.timed_out else "failed: ") + "; ".join(result.not_ready()))
                return EXIT_WAIT
        return EXIT_OK

    _guard(body, error_format, quiet)


def daemon_command(
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Watch one namespace (as --namespaces NS)."),
    namespaces: str | None = typer.Option(
        None, "--namespaces", help="Comma-separated namespaces to watch (default: all namespaces)."
    ),
    selector: str = typer.Option(
        "", "--selector", "-l", help="Label selector: reconcile only InferenceServices/InferenceGraphs it matches."
    ),
    config_namespace: str = typer.Option(
        C.KSERVE_NAMESPACE, "--config-namespace", help="Namespace of the inferenceservice-config ConfigMap."
    ),
    leader_elect: bool = typer.Option(True, "--leader-elect/--no-leader-elect", help="Lease leader election."),
    lease_namespace: str | None = typer.Option(
        None, "--lease-namespace", help="Namespace of the Lease (default: the pod's namespace)."
    ),
    lease_name: str = typer.Option(
        "", "--lease-name", help="Lease name (default: one per shard, from --namespaces and --selector)."
    ),
    lease_duration: str = typer.Option("15s", "--leader-elect-lease-duration", help="Lease duration."),
    renew_deadline: str = typer.Option("10s", "--leader-elect-renew-deadline", help="Renew period bound."),
    retry_period: str = typer.Option("2s", "--leader-elect-retry-period", help="How often followers retry."),
    resync: str = typer.Option("10m", "--resync", help="Full resync period (drift repair), e.g. 90s, 10m, 1h."),
    watch_timeout: str = typer.Option("5m", "--watch-timeout", help="Server-side timeout of each watch request."),
    not_ready_after: str = typer.Option(
        "1m", "--informer-not-ready-after", help="An informer failing this long fails /readyz."
    ),
    dead_after: str = typer.Option(
        "5m", "--informer-dead-after", help="An informer failing this long fails /healthz (the pod is restarted)."
    ),
    retry_base: str = typer.Option("500ms", "--retry-base-delay", help="First retry delay of a failed object."),
    retry_max: str = typer.Option("5m", "--retry-max-delay", help="Longest retry delay of a failed object."),
    workers: int = typer.Option(4, "--workers", min=1, help="Concurrent reconciles (never two on one object)."),
    pod_webhook: PodWebhook = POD_WEBHOOK,
    health_addr: str = typer.Option(
        f":{C.DAEMON_HEALTH_PORT}", "--health-addr", help="Address for /healthz and /readyz."
    ),
    metrics_addr: str = typer.Option(f":{C.DAEMON_METRICS_PORT}", "--metrics-addr", help="Address for /metrics."),
    kubeconfig: str | None = _KUBECONFIG,
    context: str | None = _CONTEXT,
    server: str | None = _SERVER,
) -> None:
    """Run in the cluster: watch InferenceServices and their inputs, re-render, apply, and write status."""

    def body() -> int:
        import logging
        import os

        from kserve_compile.apply import daemon

        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        scoped = tuple(
            sorted(
                {n.strip() for n in (namespaces or "").split(",") if n.strip()} | ({namespace} if namespace else set())
            )
        )
        lease_seconds = _seconds("--leader-elect-lease-duration", lease_duration)
        renew_seconds = _seconds("--leader-elect-renew-deadline", renew_deadline)
        retry_seconds = _seconds("--leader-elect-retry-period", retry_period)
        resync_seconds = _seconds("--resync", resync)
        not_ready_seconds = _seconds("--informer-not-ready-after", not_ready_after)
        dead_seconds = _seconds("--informer-dead-after", dead_after)
        retry_base_seconds = _seconds("--retry-base-delay", retry_base)
        retry_max_seconds = _seconds("--retry-max-delay", retry_max)
        in_cluster = not (server or kubeconfig or context) and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        client = _kube(server, kubeconfig, context, in_cluster=in_cluster)
        cfg = daemon.DaemonConfig(
            namespaces=scoped,
            selector=selector,
            config_namespace=config_namespace,
            leader_elect=leader_elect,
            lease_namespace=lease_namespace or _pod_namespace(),
            lease_name=lease_name,
            workers=workers,
            pod_webhook=pod_webhook.value,
            watch_timeout=max(1, int(_seconds("--watch-timeout", watch_timeout))),
            lease_seconds=lease_seconds,
            renew_seconds=renew_seconds,
            retry_seconds=retry_seconds,
            resync_seconds=resync_seconds,
            not_ready_after=not_ready_seconds,
            dead_after=dead_seconds,
            retry_base=retry_base_seconds,
            retry_max=retry_max_seconds,
        )
        return daemon.Daemon(client, cfg).serve(health_addr, metrics_addr)

    _guard(body)


def _pod_namespace() -> str:
    try:
        with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as fh:
            return fh.read().strip() or C.KSERVE_NAMESPACE
    except OSError:
        return C.KSERVE_NAMESPACE


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
    app.command("apply")(apply_command)
    app.command("daemon")(daemon_command)


if __name__ == "__main__":  # pragma: no cover - manual use before the main CLI wires register()
    _app = typer.Typer(add_completion=False)
    register(_app)
    _app(prog_name="kserve-compile", args=sys.argv[1:])
