"""The URLs KServe writes into an InferenceService's status, computed offline (``kserve-compile status``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import CompileError, InputError, Problem
from ..inputs.context import prepare, read_inputs
from ..inputs.parse import Document
from .isvc import plan_isvc, plan_status


def status_of_documents(docs: Sequence[Document]) -> list[tuple[str, dict[str, Any]]]:
    ctx = prepare(docs)
    problems: list[Problem] = list(ctx.problems)
    rows: list[tuple[str, dict[str, Any]]] = []
    for isvc, doc in sorted(ctx.isvcs, key=lambda item: (item[0].metadata.namespace, item[0].metadata.name)):
        try:
            plan = plan_isvc(isvc, ctx.config, ctx.runtimes)
            status = plan_status(plan, ctx.config)
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
            continue
        rows.append((f"{isvc.metadata.namespace}/{isvc.metadata.name}", {"deploymentMode": plan.mode, **status}))
    if ctx.llm_docs:
        from ..llmisvc import LLMContext, llm_status_rows

        llm_rows, llm_problems = llm_status_rows(
            ctx.llm_docs, LLMContext(ctx.config, ctx.cluster, ctx.config_data, ctx.llm_configmaps)
        )
        rows += llm_rows
        problems += llm_problems
    if problems:
        raise CompileError(problems)
    return rows


def status_of_files(paths: Sequence[str], config_file: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    return status_of_documents(read_inputs(paths, config_file))
