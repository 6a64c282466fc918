"""``diff``, ``apply`` and ``daemon`` commands; ``register(app)`` adds them to the main typer app.

Only typer and the standard library are imported here at module level: the kubernetes client and
the apply engine load inside the commands, so ``render`` starts fast.

Exit codes: 0 ok; 1 invalid input, apply error, or (diff) changes found; 2 usage; 3 internal error;
4 (apply --wait) readiness failed or timed out.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, List, Optional

import typer

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL, EXIT_WAIT = 0, 1, 2, 3, 4


def _err(message: str) -> None:
    typer.echo(message, err=True)


def _guard(body: Callable[[], int]) -> None:
    """Run a command body; map every failure to an exit code and a one-line message, never a traceback."""
    try:
        code = body()
    except typer.Exit:
        raise
    except FileNotFoundError as err:
        _err(f"error: no such file or directory: {err.filename or err}")
        code = EXIT_USAGE
    except Exception as err:  # noqa: BLE001 - the last line of defence for a CLI
        name = type(err).__name__
        if name in ("UsageError",):
            _err(f"error: {err}")
            code = EXIT_USAGE
        elif name in ("CompileError", "ManifestError", "ApplySetError"):
            _err(str(err))
            code = EXIT_INVALID
        elif name == "ConfigException":
            _err(f"error: cannot load cluster credentials: {err}")
            code = EXIT_USAGE
        else:
            _err(f"internal error: {name}: {err}")
            code = EXIT_INTERNAL
    raise typer.Exit(code)


def _objects(files: List[str], rendered: bool, config: Optional[str]) -> list[dict[str, Any]]:
    if rendered:
        from kserve_compile.apply.diffing import load_manifests

        return load_manifests(files)
    from kserve_compile.api import render_files  # type: ignore[import-not-found]

    return render_files(files, config_file=config)


def _kube(server: Optional[str], kubeconfig: Optional[str], context: Optional[str]) -> Any:
    from kserve_compile.apply import kube

    if server:
        return kube.Kube(kube.api_client_for_host(server))
    return kube.Kube(kube.load_api_client(kubeconfig, context))


_FILES = typer.Argument(..., help="Input files or directories ('-' = stdin).")
_RENDERED = typer.Option(False, "--rendered", help="FILES are already-rendered manifests; do not render them.")
_CONFIG = typer.Option(None, "--config", help="inferenceservice-config ConfigMap file (rendering only).")
_NS = typer.Option("default", "--namespace", "-n", help="Namespace for objects without one, and of the ApplySet.")
_KUBECONFIG = typer.Option(None, "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")
_CONTEXT = typer.Option(None, "--context", help="kubeconfig context.")
_SERVER = typer.Option(None, "--server", help="API server URL without credentials (testing).", hidden=True)
_APPLYSET = typer.Option("kserve-compile", "--applyset", help="ApplySet parent ConfigMap name (configmaps/NAME).")
_MANAGER = typer.Option("kserve-compile", "--field-manager", help="Server-side apply field manager.")


def _applyset_name(value: str) -> str:
    from kserve_compile.errors import UsageError

    name = value.split("/", 1)[1] if value.startswith(("configmaps/", "configmap/")) else value
    if "/" in name or not name:
        raise UsageError(f"--applyset must be NAME or configmaps/NAME, got {value!r}")
    return name


def diff_command(
    files: List[str] = _FILES,
    cluster: bool = typer.Option(False, "--cluster", help="Compare with the live cluster (server-side dry run)."),
    rendered: bool = _RENDERED,
    config: Optional[str] = _CONFIG,
    namespace: str = _NS,
    applyset: str = _APPLYSET,
    field_manager: str = _MANAGER,
    kubeconfig: Optional[str] = _KUBECONFIG,
    context: Optional[str] = _CONTEXT,
    server: Optional[str] = _SERVER,
    output: str = typer.Option("text", "-o", "--output", help="text (unified diffs) or json (offline only)."),
) -> None:
    """Show what would change: two renders offline (A B), or FILES against the cluster (--cluster).

    Exit 0: no changes, 1: changes, 2 or more: error (as `kubectl diff`).
    """

    def body() -> int:
        from kserve_compile.apply import diffing

        if not cluster:  # render both sides (kserve_compile/cli/diff_offline.py)
            from kserve_compile.cli.diff_offline import offline_diff

            return offline_diff(files, config, None if namespace == "default" else namespace, output)
        from kserve_compile.apply.engine import ApplyOptions, diff_cluster

        objects = _objects(files, rendered, config)
        opts = ApplyOptions(field_manager=field_manager, namespace=namespace, applyset=_applyset_name(applyset))
        results, errors = diff_cluster(_kube(server, kubeconfig, context), objects, opts)
        for r in results:
            if r.action != "unchanged":
                typer.echo(diffing.unified(r.key, r.live, r.merged), nl=False)
        for e in errors:
            _err(f"error: {e}")
        if errors:
            return 2  # kubectl diff: any exit status above 1 means the diff itself failed
        return EXIT_INVALID if any(r.action != "unchanged" for r in results) else EXIT_OK

    _guard(body)


def apply_command(
    files: List[str] = _FILES,
    rendered: bool = _RENDERED,
    config: Optional[str] = _CONFIG,
    namespace: str = _NS,
    applyset: str = _APPLYSET,
    field_manager: str = _MANAGER,
    force_conflicts: bool = typer.Option(True, "--force-conflicts/--no-force-conflicts",
                                         help="Take ownership of fields other managers own."),
    prune: bool = typer.Option(False, "--prune", help="Delete members of the ApplySet the render no longer has."),
    allow_mass_prune: bool = typer.Option(False, "--allow-mass-prune", help="Lift the mass-deletion guard."),
    recreate_on_immutable: bool = typer.Option(False, "--recreate-on-immutable",
                                               help="Delete and recreate objects whose immutable fields changed."),
    dry_run: str = typer.Option("none", "--dry-run", help="none | server"),
    wait: bool = typer.Option(False, "--wait", help="Wait until every object is ready (kstatus)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait with --wait."),
    kubeconfig: Optional[str] = _KUBECONFIG,
    context: Optional[str] = _CONTEXT,
    server: Optional[str] = _SERVER,
) -> None:
    """Server-side apply the rendered objects in stages; optionally prune and wait for readiness."""

    def body() -> int:
        if dry_run not in ("none", "server"):
            _err(f"error: --dry-run must be none or server, got {dry_run!r}")
            return EXIT_USAGE
        from kserve_compile.apply.engine import Applier, ApplyOptions, wait_for

        objects = _objects(files, rendered, config)
        kube = _kube(server, kubeconfig, context)
        opts = ApplyOptions(field_manager=field_manager, force=force_conflicts, dry_run=dry_run == "server",
                            prune=prune, allow_mass_prune=allow_mass_prune,
                            recreate_on_immutable=recreate_on_immutable, applyset=_applyset_name(applyset),
                            namespace=namespace, progress=lambda m: _err(m))
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
        typer.echo(f"apply: {report.summary()}")
        if wait and not opts.dry_run:
            result = wait_for(kube, report.applied, timeout, progress=lambda m: _err(m))
            if not result.ok:
                bad = [f"{k}: {s.state} {s.message}".rstrip() for k, s in result.statuses.items()
                       if s.state != "Current"]
                _err(("timed out waiting for: " if result.timed_out else "failed: ") + "; ".join(bad))
                return EXIT_WAIT
        return EXIT_OK

    _guard(body)


def daemon_command(
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n",
                                            help="Watch one namespace (default: all namespaces)."),
    config_namespace: str = typer.Option("kserve", "--config-namespace",
                                         help="Namespace of the inferenceservice-config ConfigMap."),
    leader_elect: bool = typer.Option(True, "--leader-elect/--no-leader-elect", help="Lease leader election."),
    lease_namespace: Optional[str] = typer.Option(None, "--lease-namespace",
                                                  help="Namespace of the Lease (default: the pod's namespace)."),
    resync: float = typer.Option(600.0, "--resync", help="Seconds between full resyncs (drift repair)."),
    health_addr: str = typer.Option(":8081", "--health-addr", help="Address for /healthz and /readyz."),
    metrics_addr: str = typer.Option(":8080", "--metrics-addr", help="Address for /metrics."),
    kubeconfig: Optional[str] = _KUBECONFIG,
    context: Optional[str] = _CONTEXT,
    server: Optional[str] = _SERVER,
) -> None:
    """Run in the cluster: watch InferenceServices and their inputs, re-render, apply, and write status."""

    def body() -> int:
        import os

        from kserve_compile.apply import daemon, kube

        if server:
            client = kube.Kube(kube.api_client_for_host(server))
        elif kubeconfig or context or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            client = kube.Kube(kube.load_api_client(kubeconfig, context))
        else:
            client = kube.Kube(kube.load_api_client(in_cluster=True))
        cfg = daemon.DaemonConfig(namespace=namespace or "", config_namespace=config_namespace,
                                  leader_elect=leader_elect, lease_namespace=lease_namespace or _pod_namespace(),
                                  resync_seconds=resync)
        d = daemon.Daemon(client, cfg)
        return d.serve(health_addr, metrics_addr)

    _guard(body)


def _pod_namespace() -> str:
    try:
        with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as fh:
            return fh.read().strip() or "kserve"
    except OSError:
        return "kserve"


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
    app.command("apply")(apply_command)
    app.command("daemon")(daemon_command)


if __name__ == "__main__":  # pragma: no cover - manual use before the main CLI wires register()
    _app = typer.Typer(add_completion=False)
    register(_app)
    _app(prog_name="kserve-compile", args=sys.argv[1:])
