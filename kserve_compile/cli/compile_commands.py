"""``render``, ``status`` and ``validate``: the compiler's commands (reading files, printing, exiting)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import List, Optional

import typer

from .exits import ErrorFormat, guarded, report


class OutputFormat(str, Enum):
    yaml = "yaml"
    json = "json"


class StatusFormat(str, Enum):
    text = "text"
    json = "json"


_CONFIG_HELP = "The inferenceservice-config ConfigMap to use instead of KServe's shipped one."


def render(
    files: List[str] = typer.Argument(..., help="InferenceService/ServingRuntime/... YAML files, directories, or - for stdin."),
    config: Optional[str] = typer.Option(None, "--config", help=_CONFIG_HELP),
    output: OutputFormat = typer.Option(OutputFormat.yaml, "-o", "--output", help="yaml or json."),
    output_dir: Optional[str] = typer.Option(None, "--output-dir", help="Write one file per object plus a kustomization.yaml."),
    error_format: ErrorFormat = typer.Option(ErrorFormat.text, "--error-format", help="text, json or github."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Do not print warnings (errors are always printed)."),
) -> None:
    """Print the objects KServe's controller and webhooks would create for the inputs."""

    def body() -> None:
        from ..api import render_result
        from ..emit import dump_json, dump_yaml, write_output_dir

        result = render_result(files, config)
        if not quiet:
            report(result.warnings, error_format)
        if output_dir is not None:
            written = write_output_dir(result.objects, output_dir)
            sys.stderr.write(f"wrote {len(written)} files to {output_dir}\n")
            return
        text = dump_json(result.objects) if output is OutputFormat.json else dump_yaml(result.objects)
        sys.stdout.buffer.write(text.encode("utf-8"))  # UTF-8 whatever the terminal's locale
        sys.stdout.flush()

    guarded(body, error_format)


def status(
    files: List[str] = typer.Argument(..., help="InferenceService YAML files, directories, or -."),
    config: Optional[str] = typer.Option(None, "--config", help=_CONFIG_HELP),
    output: StatusFormat = typer.Option(StatusFormat.text, "-o", "--output", help="text or json."),
) -> None:
    """Print the URLs KServe would report in each InferenceService's status."""

    def body() -> None:
        from ..status_urls import status_of_files

        rows = status_of_files(files, config)
        if output is StatusFormat.json:
            sys.stdout.write(json.dumps([{"name": ref, **st} for ref, st in rows], indent=2, sort_keys=True) + "\n")
            return
        for ref, st in rows:
            sys.stdout.write(f"{ref}\n  url: {st.get('url', '')}\n  address: {st.get('address', {}).get('url', '')}\n")
            for comp, info in sorted(st.get("components", {}).items()):
                sys.stdout.write(f"  {comp}: {info.get('url', '')}\n")

    guarded(body)


def validate(
    files: List[str] = typer.Argument(..., help="Files, directories, or - for stdin."),
    config: Optional[str] = typer.Option(None, "--config", help=_CONFIG_HELP),
    kube_version: str = typer.Option("1.32", "--kube-version", help="Kubernetes version whose schemas check core kinds."),
    error_format: ErrorFormat = typer.Option(ErrorFormat.text, "--error-format", help="text, json or github."),
) -> None:
    """Check inputs with KServe's admission rules, render them, and check every object against offline schemas."""

    def body() -> None:
        from ..errors import CompileError, UsageError
        from ..offline_check import validate_paths

        try:
            result = validate_paths(files, config, kube_version)
        except ValueError as exc:  # an unknown --kube-version
            raise UsageError(str(exc)) from None
        if not result.ok:
            raise CompileError(result.problems)
        report(result.problems, error_format)
        sys.stdout.write(
            f"valid: {result.inputs} input documents, {result.objects} rendered objects (Kubernetes {kube_version} schemas)\n"
        )

    guarded(body, error_format)


def register(app: typer.Typer) -> None:
    app.command()(render)
    app.command()(status)
    app.command()(validate)
