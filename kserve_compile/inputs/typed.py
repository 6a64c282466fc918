"""A document as its typed model (pydantic), every validation error turned into a located problem."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import CompileError, Problem
from ..provenance import is_tracing
from ..provenance.typed import retag_model
from .parse import Document

M = TypeVar("M", bound=BaseModel)


def typed(doc: Document, model: type[M]) -> M:
    """``doc`` as ``model``; raises :class:`CompileError` with one located problem per validation error."""
    try:
        value = model.model_validate(doc.data)
    except ValidationError as exc:
        raise CompileError([doc.problem(*_message_and_path(err)) for err in exc.errors()]) from None
    return retag_model(value, doc.data) if is_tracing() else value


def typed_all(docs: Sequence[Document], model: type[M], problems: list[Problem]) -> list[tuple[M, Document]]:
    """Each document that validates, with its document; the others' problems added to ``problems``."""
    out = []
    for doc in docs:
        try:
            out.append((typed(doc, model), doc))
        except CompileError as exc:
            problems.extend(exc.problems)
    return out


def _message_and_path(err: Any) -> tuple[str, str]:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-after", "function-before")))]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    message = _pydantic_message(err)
    inner = _INNER_PATH.match(message) if err["type"] == "value_error" else None
    if inner:  # a shape error inside inlined Kubernetes fields names its own sub-path
        path, message = f"{path}.{inner.group(1)}" if path else inner.group(1), inner.group(2)
    return message, path


_INNER_PATH = re.compile(r"^([\w\[\]./-]+): ((?:value )?must be .*)$")


def _pydantic_message(err: Any) -> str:
    kind = err["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        return f"must be {err['ctx']['expected']}"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    return f"{err['msg']} (got {err.get('input')!r:.80})"
