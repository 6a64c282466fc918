"""Go's ``text/template`` and ``html/template``, as far as KServe's templates use them: one parser, two kinds.

One parser (:mod:`.parse`, over :mod:`.lex`: Go's lexer and grammar, trim markers, comments, pipelines, the
``if``/``else``/``end`` tree, Go's error messages) feeds both kinds:

* :class:`GoTemplate` (:mod:`.subset`) — ServingRuntime placeholders (``html/template`` over the container JSON)
  and the ingress ``domainTemplate``/``pathTemplate`` (``text/template``): field chains, ``index``, string
  constants; the hot path (placeholders render per isvc).
* :class:`GoTextTemplate` (:mod:`.text`) — LLMInferenceServiceConfig presets: control flow, pipelines, builtins
  and the caller's functions, ``missingkey=error``.

:mod:`.values` holds what both execute over: :class:`Struct`, :class:`GoPtr`, field walking, ``index``, truth and
printing.
"""

from .errors import TemplateError
from .subset import GoTemplate, object_meta_data
from .text import GoTextTemplate, chain_digest
from .values import NO_VALUE, GoPtr, Struct, go_print, go_truth

__all__ = [
    "NO_VALUE",
    "GoPtr",
    "GoTemplate",
    "GoTextTemplate",
    "Struct",
    "TemplateError",
    "chain_digest",
    "go_print",
    "go_truth",
    "object_meta_data",
]
