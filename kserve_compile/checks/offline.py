"""``validate``'s offline schemas: the inputs as the API server checks them against their CRD schema (after KServe's
mutating webhook), objects passed through against theirs, and every rendered object against its schema."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import Problem
from ..inputs.parse import Document

# Input kinds checked against their CRD schema before rendering (the API server would do this on apply).
SCHEMA_CHECKED_INPUTS = (
    "InferenceService",
    "ServingRuntime",
    "ClusterServingRuntime",
    "LocalModelCache",
    "LocalModelNamespaceCache",
    "LocalModelNodeGroup",
    "LocalModelNode",
)


def input_schema_problems(
    compiled: Sequence[Document],
    passed: Sequence[Document],
    admit: Callable[[dict[str, Any]], dict[str, Any]],
    kube_version: str,
) -> list[Problem]:
    """``admit`` is KServe's mutating webhook on a raw input (the API server checks the admitted object)."""
    from .schema import check_object  # heavy (jsonschema, bundled schemas): only validate pays for it

    out = []
    for doc in compiled:
        if doc.kind in SCHEMA_CHECKED_INPUTS:
            out += [doc.problem(i.message, i.path) for i in check_object(admit(doc.data), kube_version)]
    for doc in passed:
        for issue in check_object(doc.data, kube_version):
            if issue.message.startswith("no schema is known"):
                note = f"{issue.message}: passed through with its metadata checked only"
                out.append(doc.problem(note, severity="note"))
            else:
                out.append(doc.problem(issue.message, issue.path))
    return out


def output_schema_problems(rendered: Iterable[dict[str, Any]], kube_version: str) -> list[Problem]:
    """Every rendered object (not those passed through: they are checked, located, as inputs)."""
    from .schema import check_object

    out = []
    for obj in rendered:
        for issue in check_object(obj, kube_version):
            problem = issue.to_problem()
            message = f"rendered object fails its schema: {problem.message}"
            out.append(Problem(message, problem.path, problem.kind, problem.name, file="<rendered>"))
    return out
