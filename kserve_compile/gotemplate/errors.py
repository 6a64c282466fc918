"""Template errors worded and located as Go's ``text/template`` words them.

Parse errors: ``template: NAME:LINE: MESSAGE`` (``Tree.errorf``). Execution errors:
``template: NAME:LINE:COL: executing "NAME" at <NODE>: MESSAGE`` (``state.errorf`` with ``Tree.ErrorContext``: COL
is the byte offset of the node in its line, NODE the node as the parser prints it).
"""

from __future__ import annotations

from .quote import go_quote


class TemplateError(ValueError):
    """Raised when a template cannot be parsed or executed; the message reads like Go's."""


class ExecFault(Exception):
    """An execution error before its location is known: ``node`` is where Go's ``state.at`` would point."""

    def __init__(self, message: str, node: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


def line_of(source: str, pos: int) -> int:
    return 1 + source.count("\n", 0, pos)


def parse_error(name: str, source: str, pos: int, message: str) -> TemplateError:
    return TemplateError(f"template: {name}:{line_of(source, pos)}: {message}")


def exec_error(name: str, source: str, pos: int, context: str, message: str) -> TemplateError:
    line_start = source.rfind("\n", 0, pos) + 1
    column = len(source[line_start:pos].encode())
    where = f"{name}:{line_of(source, pos)}:{column}"
    return TemplateError(f"template: {where}: executing {go_quote(name)} at <{context}>: {message}")
