"""Property: any input either renders, or is rejected with a message that names a field — never a crash.

CI runs 2,000 generated and mutated InferenceServices with a fixed seed; `python scripts/fuzz.py` runs longer.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from kserve_compile.driver import compile as compile_documents
from kserve_compile.emit import dump_yaml
from kserve_compile.errors import CompileError
from kserve_compile.inputs.parse import Document, parse_text

from .strategies import mutated_isvc

EXAMPLES = int(os.environ.get("KSERVE_COMPILE_FUZZ_EXAMPLES", "2000"))


def check_renders_or_names_a_field(doc: object) -> None:
    try:
        result = compile_documents([Document(doc, "fuzz.yaml", 0)])
    except CompileError as exc:
        assert exc.problems, "a CompileError must carry at least one problem"
        for problem in exc.problems:
            assert problem.message.strip()
            names_a_place = problem.path or problem.line or problem.kind
            not_an_object = not (isinstance(doc, dict) and doc.get("kind")) and problem.file == "fuzz.yaml"
            assert names_a_place or not_an_object, f"problem names no field, line or object: {problem}"
        return
    text = dump_yaml(result.objects)
    reparsed = parse_text(text, "out.yaml") if text else []
    assert [d.data for d in reparsed] == result.objects


@settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
@given(mutated_isvc())
def test_mutated_isvcs_render_or_are_rejected_with_a_field(doc: object) -> None:
    check_renders_or_names_a_field(doc)
