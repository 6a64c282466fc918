"""What is wrong with a run's inputs before anything compiles: unknown fields and values outside the CRDs' enums
(with did-you-mean), what the Kubernetes API server rejects, and mistyped deployment modes (a warning)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import Problem
from ..inputs.parse import Document
from .apiserver import check_documents
from .enums import check_enums
from .suggest import deployment_mode_warnings, unknown_fields


def input_problems(compiled: Sequence[Document], passed: Sequence[Document]) -> list[Problem]:
    """The checks on the documents to compile; the API server's also on those passed through."""
    unknown = [p for doc in compiled for p in (*unknown_fields(doc), *check_enums(doc))]
    return unknown + check_documents([*compiled, *passed]) + deployment_mode_warnings(compiled)
