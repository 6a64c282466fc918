"""``kserve-compile fn``: the KRM function (ResourceList on stdin → ResourceList on stdout) and, for a plain YAML
stream, a Helm post-renderer (stream in → rendered stream out). The logic is in ``kserve_compile/krm.py``."""

import sys

import typer

from .exits import EXIT_INVALID, guarded, report
from .options import NAMESPACE, QUIET, STRICT, compile_options


def fn(namespace: str | None = NAMESPACE, strict: bool = STRICT, quiet: bool = QUIET) -> None:
    """Run as a KRM function (kustomize, kpt) or a Helm post-renderer: read stdin, write the rendered result.

    A ResourceList (config.kubernetes.io/v1) gets a ResourceList back: KServe objects replaced by what they render,
    other items unchanged, problems as results (exit 1 on errors). functionConfig.data may set namespace and
    strict; the flags apply when it does not. Any other YAML stream gets the rendered stream back, as `render -`.
    """

    def body() -> int:
        from ..driver import compile
        from ..emit import dump_yaml
        from ..emit.yaml_text import yaml_document
        from ..inputs.parse import parse_text, read_source
        from ..krm import is_resource_list, run_function

        docs = parse_text(read_source("-"), "<stdin>")
        if is_resource_list(docs):
            doc = docs[0]
            if (namespace or strict) and not doc.data.get("functionConfig"):
                data = {k: v for k, v in (("namespace", namespace), ("strict", "true" if strict else None)) if v}
                doc.data = {**doc.data, "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
            out, ok = run_function(doc)
            sys.stdout.write(yaml_document(out))
            if not ok:
                report([p for p in _problems(out)])
            return 0 if ok else EXIT_INVALID
        result = compile(docs, compile_options(namespace, strict))
        if not quiet:
            report(result.warnings)
        sys.stdout.buffer.write(dump_yaml(result.objects).encode("utf-8"))
        return 0

    guarded(body, quiet=quiet)


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
