"""``render``, ``status`` and ``validate``: the compiler's commands (reading files, printing, exiting)."""

import json
import sys
from enum import Enum

import typer

from .exits import EXIT_DIFF_FAILED, EXIT_INVALID, ErrorFormat, guarded, report
from .options import CONFIG, ERROR_FORMAT, NAMESPACE, POD_WEBHOOK, QUIET, STRICT, PodWebhook, compile_options


class OutputFormat(str, Enum):
    yaml = "yaml"
    json = "json"


class StatusFormat(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


_RENDER_FILES = typer.Argument(..., help="InferenceService/ServingRuntime/... YAML files, directories, or - for stdin.")
_RENDER_OUTPUT = typer.Option(OutputFormat.yaml, "-o", "--output", help="yaml or json.")
_OUTPUT_DIR = typer.Option(
    None, "--output-dir", help="Write one file per object (named after it) plus a kustomization.yaml in apply order."
)
_CHECK = typer.Option(
    False,
    "--check",
    help="With --output-dir: write nothing; exit 0 if the directory is current, 1 (listing the stale files) if not, "
    "2 on an error (as kubectl diff).",
)
_STATUS_FILES = typer.Argument(..., help="InferenceService YAML files, directories, or -.")
_STATUS_OUTPUT = typer.Option(StatusFormat.text, "-o", "--output", help="text, json or yaml.")
_VALIDATE_FILES = typer.Argument(..., help="Files, directories, or - for stdin.")
_KUBE_VERSION = typer.Option("1.32", "--kube-version", help="Kubernetes version whose schemas check core kinds.")


def render(
    files: list[str] = _RENDER_FILES,
    config: str | None = CONFIG,
    output: OutputFormat = _RENDER_OUTPUT,
    output_dir: str | None = _OUTPUT_DIR,
    check: bool = _CHECK,
    namespace: str | None = NAMESPACE,
    strict: bool = STRICT,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Print the objects KServe's controller and webhooks would create for the inputs."""

    def body() -> int:
        from ..driver import compile
        from ..emit import dump_json, dump_yaml
        from ..errors import CompileError, UsageError
        from ..inputs.gather import read_inputs

        if check and output_dir is None:
            raise UsageError("--check needs --output-dir (the directory to compare with)")
        try:
            result = compile(read_inputs(files, config), compile_options(namespace, strict, pod_webhook))
        except CompileError as exc:
            if not check:
                raise
            report([p for p in exc.problems if p.severity == "error" or not quiet], error_format)
            return EXIT_DIFF_FAILED  # as kubectl diff: 1 means "stale", an error is 2
        if not quiet:
            report(result.warnings, error_format)
        if output_dir is not None:
            return _output_dir(result.objects, output_dir, check, quiet)
        text = dump_json(result.objects) if output is OutputFormat.json else dump_yaml(result.objects)
        sys.stdout.buffer.write(text.encode("utf-8"))  # UTF-8 whatever the terminal's locale
        sys.stdout.flush()
        return 0

    guarded(body, error_format, quiet)


def _output_dir(objects: list[dict], directory: str, check: bool, quiet: bool) -> int:
    from ..emit import output_dir_changes, write_output_dir

    changes = output_dir_changes(objects, directory)
    if check:
        if changes.stale:
            sys.stdout.write("".join(f"{line}\n" for line in changes.lines()))
            sys.stderr.write(f"{directory} is stale ({changes.summary()}); run the same command without --check\n")
            return EXIT_INVALID
        if not quiet:
            sys.stderr.write(f"{directory} is current\n")
        return 0
    written = write_output_dir(objects, directory)
    if quiet:
        return 0
    if not changes.stale:
        sys.stderr.write(f"{directory} is current ({len(written)} files): nothing written\n")
    else:
        count = len(changes.added) + len(changes.changed)
        sys.stderr.write(f"wrote {count} of {len(written)} files to {directory} ({changes.summary()})\n")
    return 0


def status(
    files: list[str] = _STATUS_FILES,
    config: str | None = CONFIG,
    output: StatusFormat = _STATUS_OUTPUT,
    namespace: str | None = NAMESPACE,
    strict: bool = STRICT,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Print the URLs KServe would report in each InferenceService's status."""

    def body() -> None:
        from ..driver import compile
        from ..inputs.gather import read_inputs

        result = compile(read_inputs(files, config), compile_options(namespace, strict, pod_webhook))
        if not quiet:
            report(result.warnings, error_format)
        rows = result.status_rows()
        listed = [{"name": ref, **st} for ref, st in rows]
        if output is StatusFormat.json:
            sys.stdout.write(json.dumps(listed, indent=2, sort_keys=True) + "\n")
            return
        if output is StatusFormat.yaml:
            import yaml

            sys.stdout.write(yaml.safe_dump(listed, sort_keys=True, default_flow_style=False))
            return
        for ref, st in rows:
            sys.stdout.write(f"{ref}\n  url: {st.get('url', '')}\n  address: {st.get('address', {}).get('url', '')}\n")
            for comp, info in sorted(st.get("components", {}).items()):
                sys.stdout.write(f"  {comp}: {info.get('url', '')}\n")
            if "scaleToZero" in st:  # kserve-compile's opt-in, beyond KServe
                scaled = ", ".join(sorted(st["scaleToZero"]["components"]))
                sys.stdout.write(
                    f"  scale to zero: {scaled} (KEDA HTTP add-on, interceptor {st['scaleToZero']['interceptor']})\n"
                )

    guarded(body, error_format, quiet)


def validate(
    files: list[str] = _VALIDATE_FILES,
    config: str | None = CONFIG,
    kube_version: str = _KUBE_VERSION,
    namespace: str | None = NAMESPACE,
    strict: bool = STRICT,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Check inputs with KServe's admission rules and the API server's, render them, and check every object against
    offline schemas."""

    def body() -> None:
        from ..checks.schema import check_kube_version
        from ..driver import compile
        from ..inputs.gather import read_inputs

        check_kube_version(kube_version)
        options = compile_options(namespace, strict, pod_webhook, kube_version=kube_version)
        result = compile(read_inputs(files, config), options)
        if not quiet:
            report(result.warnings, error_format)
        sys.stdout.write(
            f"valid: {result.inputs} input documents, {len(result.objects)} rendered objects (Kubernetes {kube_version} schemas)\n"
        )

    guarded(body, error_format, quiet)


def register(app: typer.Typer) -> None:
    app.command()(render)
    app.command()(status)
    app.command()(validate)
