"""Errors that point at the input: file, line, column, object and field path.

A pure stage raises :class:`InputError` naming the field path it rejects; the driver attaches the
file and position from the parse step's source map and gathers every problem of a run into one
:class:`CompileError`, so a user sees all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Problem:
    message: str
    path: str = ""  # field path inside the object, e.g. "spec.predictor.model.runtime"
    kind: str = ""
    name: str = ""
    file: str = ""
    line: int = 0  # 1-based; 0 = unknown
    col: int = 0  # 1-based; 0 = unknown
    severity: str = "error"  # or "warning"

    @property
    def object_ref(self) -> str:
        return f"{self.kind}/{self.name}" if self.kind else ""

    def format(self) -> str:
        """``file:line:col: Kind/name: field.path: message`` with absent parts left out."""
        where = self.file or "<input>"
        if self.line:
            where += f":{self.line}:{self.col or 1}"
        parts = [where]
        if self.object_ref:
            parts.append(self.object_ref)
        if self.path:
            parts.append(self.path)
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        return ": ".join(parts) + ": " + prefix + self.message

    def with_context(self, **changes: Any) -> Problem:  # field values: str or int, by field
        """Fill in only the context fields that are still empty."""
        fill = {k: v for k, v in changes.items() if not getattr(self, k)}
        return replace(self, **fill) if fill else self


class InputError(Exception):
    """One rejected input; ``path`` is the field path inside the object being compiled."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def problem(self) -> Problem:
        return Problem(self.message, self.path)


@dataclass
class CompileError(Exception):
    """Every problem found in one run (raised only when at least one is an error)."""

    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.format() for p in self.problems)


class UsageError(Exception):
    """Bad command-line usage (exit 2), e.g. a missing file or an unknown output format."""
