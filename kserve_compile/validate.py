"""``kserve-compile validate``: KServe's admission rules on the inputs, then offline schemas on inputs and outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import CompileError, Problem
from .parse import Document, parse_paths
from .pipeline import compile_documents

# Input kinds checked against their CRD schema before rendering (the API server would do this on apply).
SCHEMA_CHECKED_INPUTS = ("InferenceService", "ServingRuntime", "ClusterServingRuntime")


@dataclass
class Report:
    inputs: int = 0
    objects: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def validate_documents(docs: Sequence[Document], kube_version: str) -> Report:
    from .schema_check import check_object  # heavy (jsonschema, bundled schemas): only validate pays for it

    report = Report(inputs=len(docs))
    for doc in docs:
        if doc.kind in SCHEMA_CHECKED_INPUTS:
            for issue in check_object(doc.data, kube_version):
                report.problems.append(doc.problem(issue.message, issue.path))
    try:
        result = compile_documents(docs)
    except CompileError as exc:
        report.problems = _dedupe(report.problems + exc.problems)
        return report
    report.problems.extend(result.warnings)
    report.problems = _dedupe(report.problems)
    report.objects = len(result.objects)
    for obj in result.objects:
        for issue in check_object(obj, kube_version):
            problem = issue.to_problem()
            report.problems.append(Problem(f"rendered object fails its schema: {problem.message}", problem.path, problem.kind, problem.name, file="<rendered>"))
    return report


def validate_paths(paths: Sequence[str], config_file: str | None, kube_version: str) -> Report:
    docs = parse_paths(paths)
    if config_file is not None:
        docs = [d for d in docs if d.kind != "ConfigMap"] + [d for d in parse_paths([config_file]) if d.kind == "ConfigMap"]
    return validate_documents(docs, kube_version)


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
