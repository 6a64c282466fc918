"""``kserve-compile validate``: KServe's admission rules on the inputs, then offline schemas on inputs and outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..constants import CONFIGMAP_NAME
from ..emit.order import identity
from ..errors import CompileError, Problem
from ..inputs.config import KServeConfig
from ..inputs.context import load_config, read_inputs
from ..inputs.parse import Document
from ..inputs.resources import InferenceService
from ..plan.defaulting import default_isvc
from ..run_options import RunOptions, by_place, prepared_inputs, render_documents

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


@dataclass
class Report:
    inputs: int = 0
    objects: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def validate_documents(docs: Sequence[Document], kube_version: str, options: RunOptions | None = None) -> Report:
    from .schema import check_object  # heavy (jsonschema, bundled schemas): only validate pays for it

    report = Report(inputs=len(docs))
    config = _config_or_none(docs)
    options = options or RunOptions()
    split = prepared_inputs(docs, options)
    for doc in split.compiled:
        if doc.kind in SCHEMA_CHECKED_INPUTS:
            for issue in check_object(admitted(doc.data, config), kube_version):
                report.problems.append(doc.problem(issue.message, issue.path))
    passed = _check_passed(split.passed, kube_version)
    report.problems += passed
    try:
        result = render_documents(docs, options)
    except CompileError as exc:
        report.problems = by_place(_dedupe(exc.problems + report.problems))  # render's (KServe's wording) first
        return report
    report.problems.extend(result.warnings)
    report.problems = _dedupe(report.problems)
    report.objects = len(result.objects)
    passed_ids = {identity(doc.data, 0) for doc in split.passed}
    for i, obj in enumerate(result.objects):
        if identity(obj, i) in passed_ids:
            continue  # checked above, located in its file
        for issue in check_object(obj, kube_version):
            problem = issue.to_problem()
            report.problems.append(
                Problem(
                    f"rendered object fails its schema: {problem.message}",
                    problem.path,
                    problem.kind,
                    problem.name,
                    file="<rendered>",
                )
            )
    return report


def admitted(obj: dict[str, Any], config: KServeConfig | None) -> dict[str, Any]:
    """An InferenceService as the API server checks it against its schema: after the mutating webhook (which,
    e.g., names a lone custom container ``kserve-container``). Other objects, and ones that do not parse, as given."""
    if config is None or obj.get("kind") != "InferenceService":
        return obj
    try:
        isvc = InferenceService.model_validate(obj)
    except ValidationError:
        return obj
    return default_isvc(isvc, config).model_dump(by_alias=True, exclude_none=True)


def _config_or_none(docs: Sequence[Document]) -> KServeConfig | None:
    try:
        return load_config([d for d in docs if d.kind == "ConfigMap" and d.name == CONFIGMAP_NAME])
    except CompileError:
        return None  # the compile step reports a bad ConfigMap


def validate_paths(
    paths: Sequence[str], config_file: str | None, kube_version: str, options: RunOptions | None = None
) -> Report:
    return validate_documents(read_inputs(paths, config_file), kube_version, options)


def _check_passed(docs: Sequence[Document], kube_version: str) -> list[Problem]:
    """Passed-through objects against their schema where one is bundled; a kind without one gets a note."""
    from .schema import check_object  # heavy (jsonschema, bundled schemas): only validate pays for it

    out = []
    for doc in docs:
        for issue in check_object(doc.data, kube_version):
            if issue.message.startswith("no schema is known"):
                out.append(
                    doc.problem(f"{issue.message}: passed through with its metadata checked only", severity="note")
                )
            else:
                out.append(doc.problem(issue.message, issue.path))
    return out


def _dedupe(problems: list[Problem]) -> list[Problem]:
    """One problem per place: the schema and the typed model may both reject the same field."""
    seen: set[tuple] = set()
    out = []
    for p in problems:
        key = (p.file, p.line, p.col, p.path, p.severity)
        if p.line and key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out
