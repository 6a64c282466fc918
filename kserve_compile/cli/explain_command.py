"""``explain``: the rendered objects with where every value comes from."""

import json
import sys
from enum import Enum

import typer

from .exits import ErrorFormat, guarded, report
from .options import CONFIG, ERROR_FORMAT, NAMESPACE, POD_WEBHOOK, QUIET, STRICT, PodWebhook, compile_options


class ExplainFormat(str, Enum):
    yaml = "yaml"
    json = "json"


def explain(
    files: list[str] = typer.Argument(..., help="The inputs, as for render: files, directories, or - for stdin."),
    config: str | None = CONFIG,
    obj: str | None = typer.Option(
        None, "--object", help="Only this rendered object: Kind/name or Kind/namespace/name."
    ),
    field: str | None = typer.Option(
        None, "--field", help="Only this field (e.g. spec.template.spec.containers[0].image): its whole chain."
    ),
    output: ExplainFormat = typer.Option(
        ExplainFormat.yaml, "-o", "--output", help="yaml (origins as comments) or json."
    ),
    namespace: str | None = NAMESPACE,
    strict: bool = STRICT,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    error_format: ErrorFormat = ERROR_FORMAT,
    quiet: bool = QUIET,
) -> None:
    """Show where every rendered value comes from: an input field, a ConfigMap key, a runtime, a KServe default, or
    the pod webhook — and, with --field, what each value replaced. With --pod-webhook cluster, a note per injector
    says what KServe's pod webhook will add to the Pods."""

    def body() -> None:
        from ..driver import compile
        from ..emit.explain import annotated_yaml, as_json, describe_field, field_origin, select
        from ..emit.order import object_ref
        from ..errors import UsageError
        from ..inputs.gather import read_inputs

        result = compile(read_inputs(files, config), compile_options(namespace, strict, pod_webhook, trace=True))
        if field is not None and obj is None:
            refs = ", ".join(sorted({object_ref(o) for o in result.objects}))
            raise UsageError(f"--field needs --object: the rendered object to look in (rendered: {refs})")
        if not quiet:
            report(result.warnings, error_format)
        objects = select(result.objects, obj)
        if field is not None:
            found = [(o, field_origin(o, field)) for o in objects]
            if output is ExplainFormat.json:
                payload = [
                    {
                        "object": f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}",
                        "field": f.path,
                        "value": f.value,
                        "chain": [c.as_dict() for c in f.chain],
                    }
                    for o, f in found
                ]
                sys.stdout.write(json.dumps(payload, indent=2) + "\n")
            else:
                sys.stdout.write("".join(describe_field(o, f) for o, f in found))
            return
        if output is ExplainFormat.json:
            sys.stdout.write(json.dumps(as_json(objects), indent=2) + "\n")
            return
        sys.stdout.buffer.write(annotated_yaml(objects).encode("utf-8"))

    guarded(body, error_format, quiet)


def register(app: typer.Typer) -> None:
    app.command()(explain)
