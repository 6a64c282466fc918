"""``kserve-compile fn``: the KRM function (ResourceList on stdin → ResourceList on stdout) and, for a plain YAML
stream, a Helm post-renderer (stream in → rendered stream out). The logic is in ``kserve_compile/krm.py``."""

import sys

import typer

from .exits import EXIT_INVALID, ErrorFormat, guarded, report
from .options import CONFIG, ERROR_FORMAT, NAMESPACE, POD_WEBHOOK, QUIET, STRICT, PodWebhook, compile_options


def fn(
    namespace: str | None = NAMESPACE,
    strict: bool = STRICT,
    pod_webhook: PodWebhook = POD_WEBHOOK,
    quiet: bool = QUIET,
    config: str | None = CONFIG,
    error_format: ErrorFormat = ERROR_FORMAT,
) -> None:
    """Run as a KRM function (kustomize, kpt) or a Helm post-renderer: read stdin, write the rendered result.

    A ResourceList (config.kubernetes.io/v1) gets a ResourceList back: KServe objects replaced by what they render,
    other items unchanged, problems as results (exit 1 on errors). functionConfig.data may set namespace, strict
    and podWebhook; the flags apply when it does not. Any other YAML stream gets the rendered stream back, as `render -`.
    """

    def body() -> int:
        from ..driver import compile
        from ..emit import dump_yaml
        from ..emit.yaml_text import yaml_document
        from ..errors import CompileError, Problem
        from ..inputs.gather import assemble, config_documents
        from ..inputs.parse import parse_text, read_source
        from ..krm import is_resource_list, run_function

        docs = parse_text(read_source("-"), "<stdin>")
        if not docs:
            raise CompileError([Problem("no Kubernetes objects in the input (stdin is empty)", file="<stdin>")])
        if is_resource_list(docs):
            doc = docs[0]
            cluster = pod_webhook is PodWebhook.cluster
            if (namespace or strict or cluster) and not doc.data.get("functionConfig"):
                flags = (
                    ("namespace", namespace),
                    ("strict", "true" if strict else None),
                    ("podWebhook", "cluster" if cluster else None),
                )
                data = {k: v for k, v in flags if v}
                doc.data = {**doc.data, "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
            out, ok = run_function(doc, config_documents(config) if config else None)
            sys.stdout.write(yaml_document(out))
            if not ok:
                report([p for p in _problems(out)], error_format)
            return 0 if ok else EXIT_INVALID
        result = compile(
            assemble(docs, config_documents(config) if config else None),
            compile_options(namespace, strict, pod_webhook),
        )
        if not quiet:
            report(result.warnings, error_format)
        sys.stdout.buffer.write(dump_yaml(result.objects).encode("utf-8"))
        return 0

    guarded(body, error_format, quiet)


def _problems(out: dict) -> list:
    """The error results again, as problems on stderr (kustomize shows a failing function's stderr)."""
    from ..errors import Problem

    found = []
    for r in out.get("results", []):
        if r.get("severity") == "error":
            ref = r.get("resourceRef") or {}
            line = int((r.get("tags") or {}).get("line", 0))
            col = int((r.get("tags") or {}).get("column", 0))
            found.append(
                Problem(
                    r["message"],
                    (r.get("field") or {}).get("path", ""),
                    ref.get("kind", ""),
                    ref.get("name", ""),
                    (r.get("file") or {}).get("path", ""),
                    line,
                    col,
                )
            )
    return found


def register(app: typer.Typer) -> None:
    app.command("fn")(fn)
