"""One run of the compiler with the options every command shares: ``-n/--namespace`` and ``--strict``.

``render``, ``status``, ``validate``, the offline ``diff`` and the KRM function all read their documents through
:func:`render_documents` / :func:`prepared_inputs`, so they see the same objects and report the same problems:

    documents → v1 Lists as their items → namespace filled in (namespacing.py)
              → compiled / passed through / skipped (passthrough.py)
              → API-server checks on every object (apiserver_checks.py) → compile (pipeline.py) → one sorted list
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .checks.apiserver import check_documents
from .checks.enums import check_enums
from .checks.suggest import deployment_mode_warnings, unknown_fields
from .driver import Result, compile_documents
from .emit import sort_objects
from .emit.order import identity
from .errors import CompileError, Problem
from .inputs.namespacing import with_namespace
from .inputs.parse import Document
from .inputs.passthrough import Split, expand_lists, split_inputs


@dataclass(frozen=True)
class RunOptions:
    namespace: str | None = None  # -n: the namespace of inputs that name none (None: "default", as the API server)
    strict: bool = False  # --strict: refuse objects kserve-compile does not compile instead of passing them through


def prepared_inputs(docs: Sequence[Document], options: RunOptions = RunOptions()) -> Split:
    """The documents sorted into compiled / passed through / skipped, with ``-n`` applied."""
    return split_inputs(with_namespace(expand_lists(docs), options.namespace), strict=options.strict)


def render_documents(docs: Sequence[Document], options: RunOptions = RunOptions()) -> Result:
    """Every object of the run, rendered and passed through, in apply order; warnings and notes with them."""
    return render_split(prepared_inputs(docs, options))


def render_split(split: Split) -> Result:
    """:func:`render_documents` after the documents are sorted (the KRM function starts here)."""
    checked = input_problems(split)
    errors = [p for p in checked if p.severity == "error"]
    try:
        result = compile_documents(split.compiled)
    except CompileError as exc:
        raise CompileError(by_place(_merge(errors, exc.problems)) + split.notes) from None
    objects = result.objects + [doc.data for doc in split.passed]
    errors += _duplicates(objects, split)
    warnings = [p for p in checked if p.severity != "error"] + result.warnings + split.notes
    if errors:
        raise CompileError(by_place(errors) + warnings)
    return Result(sort_objects(objects) if split.passed else result.objects, warnings)


def input_problems(split: Split) -> list[Problem]:
    """What is wrong with the inputs before compiling: unknown fields and values outside the CRDs' enums (with
    did-you-mean), what the API server rejects, and mistyped deployment modes (a warning)."""
    unknown = [p for doc in split.compiled for p in (*unknown_fields(doc), *check_enums(doc))]
    return unknown + check_documents([*split.compiled, *split.passed]) + deployment_mode_warnings(split.compiled)


def by_place(problems: list[Problem]) -> list[Problem]:
    """Errors before warnings and notes, each in file, line, column order (stable: one place keeps its order)."""
    return sorted(problems, key=lambda p: (p.severity != "error", p.file, p.line, p.col))


def _merge(checks: list[Problem], compiled: list[Problem]) -> list[Problem]:
    """One problem per place (as ``validate``), KServe's own wording first: the compiler's problems, then the input
    checks' at places the compiler did not report. The typed model's bare 'unknown field "x"' on a struct gives way
    to the input checks' report of the field itself, with its did-you-mean."""
    fields = {(p.file, p.path) for p in checks}
    kept = [
        p
        for p in compiled
        if not ((m := _BARE_UNKNOWN.match(p.message)) and (p.file, f"{p.path}.{m.group(1)}") in fields)
    ]
    places: set[tuple] = set()
    out = []
    for p in [*kept, *checks]:
        if _place(p) not in places:
            places.add(_place(p))
            out.append(p)
    return out


def _place(p: Problem) -> tuple:
    return (p.file, p.line, p.col, p.path, p.severity) if p.line else (p.file, p.path, p.severity, p.message)


_BARE_UNKNOWN = re.compile(r'^unknown field "([^"]+)"$')


def _duplicates(objects: list[dict], split: Split) -> list[Problem]:
    """A passed-through object with the identity of another object of the run (rendered or passed) is an error."""
    owners: dict[tuple[str, str, str, str], int] = {}
    for i, obj in enumerate(objects):
        group, _, kind, ns, name = identity(obj, i)
        owners.setdefault((group, kind, ns, name), 0)
        owners[(group, kind, ns, name)] += 1
    problems = []
    for doc in split.passed:
        group, _, kind, ns, name = identity(doc.data, 0)
        if owners.get((group, kind, ns, name), 0) > 1:
            problems.append(
                doc.problem(
                    f"{kind} {ns + '/' if ns else ''}{name} is defined twice in the run (by the inputs or by what they render)",
                    "metadata.name",
                )
            )
    return problems
