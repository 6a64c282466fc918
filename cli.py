"""kserve-compile's command line: the only place (with apply/ and server/) that reads files, prints or exits."""

from __future__ import annotations

import json
import os
import sys
from enum import Enum
from typing import List, Optional

import typer

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Compile KServe InferenceServices into the Kubernetes objects KServe would create — no cluster needed.",
)


class OutputFormat(str, Enum):
    yaml = "yaml"
    json = "json"


class ErrorFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


def _report(problems, error_format: ErrorFormat) -> None:
    """Problems to stderr in the chosen format (GitHub annotations for CI logs)."""
    for p in problems:
        if error_format is ErrorFormat.json:
            sys.stderr.write(json.dumps({k: getattr(p, k) for k in ("severity", "file", "line", "col", "kind", "name", "path", "message")}) + "\n")
        elif error_format is ErrorFormat.github:
            level = "error" if p.severity == "error" else "warning"
            where = f"file={p.file},line={p.line or 1},col={p.col or 1}"
            title = f"{p.object_ref} {p.path}".strip()
            sys.stderr.write(f"::{level} {where},title={title}::{p.message}\n")
        else:
            sys.stderr.write(p.format() + "\n")


def _run(body, error_format: ErrorFormat = ErrorFormat.text) -> None:
    """Map every outcome to an exit code; never show a traceback (set KSERVE_COMPILE_DEBUG=1 to see one)."""
    from kserve_compile.errors import CompileError, UsageError

    try:
        body()
    except CompileError as exc:
        _report(exc.problems, error_format)
        raise typer.Exit(EXIT_INVALID)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(EXIT_USAGE)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(130)
    except Exception as exc:  # noqa: BLE001 - the CLI's last line of defence
        if os.environ.get("KSERVE_COMPILE_DEBUG"):
            raise
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (please report this; KSERVE_COMPILE_DEBUG=1 shows the traceback)\n")
        raise typer.Exit(EXIT_INTERNAL)


@app.command()
def render(
    files: List[str] = typer.Argument(..., help="InferenceService/ServingRuntime/... YAML files, directories, or - for stdin."),
    config: Optional[str] = typer.Option(None, "--config", help="The inferenceservice-config ConfigMap to use instead of KServe's shipped one."),
    output: OutputFormat = typer.Option(OutputFormat.yaml, "-o", "--output", help="yaml or json."),
    output_dir: Optional[str] = typer.Option(None, "--output-dir", help="Write one file per object plus a kustomization.yaml."),
    error_format: ErrorFormat = typer.Option(ErrorFormat.text, "--error-format", help="text, json or github."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Do not print warnings (errors are always printed)."),
) -> None:
    """Print the objects KServe's controller and webhooks would create for the inputs."""

    def body() -> None:
        from kserve_compile.api import render_result
        from kserve_compile.emit import dump_json, dump_yaml, write_output_dir

        result = render_result(files, config)
        if not quiet:
            _report(result.warnings, error_format)
        if output_dir is not None:
            written = write_output_dir(result.objects, output_dir)
            sys.stderr.write(f"wrote {len(written)} files to {output_dir}\n")
            return
        text = dump_json(result.objects) if output is OutputFormat.json else dump_yaml(result.objects)
        sys.stdout.buffer.write(text.encode("utf-8"))  # UTF-8 whatever the terminal's locale
        sys.stdout.flush()

    _run(body, error_format)


@app.command()
def status(
    files: List[str] = typer.Argument(..., help="InferenceService YAML files, directories, or -."),
    config: Optional[str] = typer.Option(None, "--config", help="The inferenceservice-config ConfigMap to use."),
    output: str = typer.Option("text", "-o", "--output", help="text or json."),
) -> None:
    """Print the URLs KServe would report in each InferenceService's status."""

    def body() -> None:
        from kserve_compile.status import status_of_files

        rows = status_of_files(files, config)
        if output == "json":
            sys.stdout.write(json.dumps([{"name": ref, **st} for ref, st in rows], indent=2, sort_keys=True) + "\n")
            return
        for ref, st in rows:
            sys.stdout.write(f"{ref}\n  url: {st.get('url', '')}\n  address: {st.get('address', {}).get('url', '')}\n")
            for comp, info in sorted(st.get("components", {}).items()):
                sys.stdout.write(f"  {comp}: {info.get('url', '')}\n")
            for extra in st.get("addresses", []):  # LLMInferenceService: every address KServe lists
                sys.stdout.write(f"  addresses: {extra.get('url', '')}\n")
            if st.get("path"):  # LLMInferenceService behind a Gateway whose address is not given
                sys.stdout.write(f"  path: {st['path']} (on {', '.join(st.get('router', {}).get('gateways', []))})\n")

    _run(body)


@app.command()
def validate(
    files: List[str] = typer.Argument(..., help="Files, directories, or - for stdin."),
    config: Optional[str] = typer.Option(None, "--config", help="The inferenceservice-config ConfigMap to use."),
    kube_version: str = typer.Option("1.32", "--kube-version", help="Kubernetes version whose schemas check core kinds."),
    error_format: ErrorFormat = typer.Option(ErrorFormat.text, "--error-format", help="text, json or github."),
) -> None:
    """Check inputs with KServe's admission rules, render them, and check every object against offline schemas."""

    def body() -> None:
        from kserve_compile.errors import CompileError, UsageError
        from kserve_compile.validate import validate_paths

        try:
            report = validate_paths(files, config, kube_version)
        except ValueError as exc:  # an unknown --kube-version
            raise UsageError(str(exc)) from None
        if not report.ok:
            raise CompileError(report.problems)
        _report(report.problems, error_format)
        sys.stdout.write(f"valid: {report.inputs} input documents, {report.objects} rendered objects (Kubernetes {kube_version} schemas)\n")

    _run(body, error_format)


def _register_extras() -> None:
    from kserve_compile.apply.cli import register

    register(app)


_register_extras()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
