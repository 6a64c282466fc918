"""Errors that point at the input: file, line, column, object and field path.

A pure stage raises :class:`InputError` naming the field path it rejects; the driver attaches the
file and position from the parse step's source map and gathers every problem of a run into one
:class:`CompileError`, so a user sees all of them at once. The wordings several stages share (a did-you-mean, a value outside an enum, an
unknown field) are defined here once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
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
    severity: str = "error"  # or "warning", "note"
    about: str = ""  # a run-level note's subject (an input the run lacks): said once per run, however many objects

    @property
    def object_ref(self) -> str:
        return f"{self.kind}/{self.name}" if self.kind and self.name else self.kind

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


class MissingInput(str):
    """A note that an input the cluster would hold (a ServiceAccount, a Secret) is not among the run's inputs, and what
    that leaves out. A ``str``, so it travels as any note; the driver says it once per run with how many objects
    it concerns."""

    subject: str

    def __new__(cls, kind: str, namespace: str, name: str, effect: str) -> MissingInput:
        note = super().__new__(cls, f"{kind} {namespace}/{name} not in the inputs: {effect}")
        note.subject = f"{kind} {namespace}/{name}"
        return note


class WebhookNote(str):
    """What KServe's pod webhook in the cluster adds to an object's Pods (``explain`` with ``--pod-webhook
    cluster``): information, said as a note, never a warning."""


def note_problem(located: Any, note: str, severity: str = "warning") -> Problem:
    """An object's note as a located problem (``located``: its Document, or anything with ``problem``); a
    :class:`MissingInput` becomes a run-level note about its subject, a :class:`WebhookNote` a note."""
    if isinstance(note, MissingInput):
        return located.problem(str(note), severity="note", about=note.subject)
    if isinstance(note, WebhookNote):
        return located.problem(str(note), severity="note")
    return located.problem(note, severity=severity)


def once_per_run(problems: Sequence[Problem]) -> list[Problem]:
    """The run-level notes (``about`` set) one per subject, saying how many objects they concern; the rest as is."""
    counts: dict[str, int] = {}
    for p in problems:
        if p.about:
            counts[p.about] = counts.get(p.about, 0) + 1
    out, said = [], set()
    for p in problems:
        if not p.about:
            out.append(p)
        elif p.about not in said:
            said.add(p.about)
            n = counts[p.about]
            more = f" (and for {n - 1} more object{'s' if n > 2 else ''} of the run)" if n > 1 else ""
            hint = "; give it as an input to inline what KServe's webhook reads from it, as from the cluster"
            out.append(replace(p, message=p.message + more + hint))
    return out


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


# --- the shared wordings ------------------------------------------------------------------------------------------


_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v"}


def go_quote(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``), as KServe's messages and Go's templates quote: printable characters kept,
    the rest escaped as Go escapes them."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():  # Python's printable set is Go's unicode.IsPrint: letters, marks, numbers, P, S, ' '
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known word nearest to ``word`` (case-insensitive), if one is near enough."""
    choices = list(known)
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``'; did you mean "x"?'`` or ``""``."""
    near = closest(word, known)
    return f'; did you mean "{near}"?' if near and near != word else ""


def enum_message(value: object, allowed: Iterable[object]) -> str:
    """The one wording of a value outside an enum (the API server's), with a did-you-mean."""
    choices = list(allowed)
    hint = did_you_mean(value, [str(c) for c in choices]) if isinstance(value, str) else ""
    return f"unsupported value {value!r}: supported values: {', '.join(repr(c) for c in choices)}{hint}"


def unknown_field_message(key: str, known: Iterable[str]) -> str:
    """The one wording of an unknown field, for ``render`` (typed models) and ``validate`` (schemas) alike."""
    return f'unknown field "{key}"{did_you_mean(key, known)}'


# --- one problem per place -----------------------------------------------------------------------------------------


def by_place(problems: Iterable[Problem]) -> list[Problem]:
    """Errors before warnings and notes, each in file, line, column order (stable: one place keeps its order)."""
    return sorted(problems, key=lambda p: (p.severity != "error", p.file, p.line, p.col))


def merge_problems(*sources: Sequence[Problem]) -> list[Problem]:
    """One problem per place, from ``sources`` in order of precedence (KServe's own wording first). A typed model's
    bare 'unknown field "x"' on a struct gives way to a later source's report of the field itself."""
    later = [p for source in sources[1:] for p in source]
    fields = {(p.file, p.path) for p in later}
    first = [
        p
        for p in (sources[0] if sources else ())
        if not ((m := _BARE_UNKNOWN.match(p.message)) and (p.file, f"{p.path}.{m.group(1)}") in fields)
    ]
    places: set[tuple] = set()
    out = []
    for p in [*first, *later]:
        if _place(p) not in places:
            places.add(_place(p))
            out.append(p)
    return out


def _place(p: Problem) -> tuple:
    return (p.file, p.line, p.col, p.path, p.severity) if p.line else (p.file, p.path, p.severity, p.message)


_BARE_UNKNOWN = re.compile(r'^unknown field "([^"]+)"$')
