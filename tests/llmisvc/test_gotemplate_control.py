"""The control-flow subset of Go's text/template (kserve_compile.gotemplate.GoTextTemplate)."""

from __future__ import annotations

import pytest

from kserve_compile.errors import InputError
from kserve_compile.gotemplate import GoPtr, GoTextTemplate, Struct, TemplateError
from kserve_compile.llmisvc.variables import replace_variables


def render(source: str, data: object, **funcs: object) -> str:
    return GoTextTemplate(source, funcs).render(data)


def test_if_else_and_trim_markers() -> None:
    src = "a {{ if .On }}yes{{ else }}no{{- end }} b"
    assert render(src, Struct(On=True)) == "a yes b"
    assert render(src, Struct(On=False)) == "a no b"
    assert render("x  {{- if .On -}}  y  {{- end -}}  z", Struct(On=True)) == "xyz"


def test_else_if_chain() -> None:
    src = "{{ if .A }}a{{ else if .B }}b{{ else }}c{{ end }}"
    assert [render(src, Struct(A=a, B=b)) for a, b in ((1, 0), (0, 1), (0, 0))] == ["a", "b", "c"]


def test_pointer_to_zero_is_true_and_prints_its_value() -> None:
    # Go: a non-nil *int32 is true in `if`/`or` even when it points at 0
    assert render("{{ or .P 1 }}", Struct(P=GoPtr(0))) == "0"
    assert render("{{ or .P 1 }}", Struct(P=None)) == "1"
    assert render("{{ if .P }}set{{ end }}", Struct(P=GoPtr(0))) == "set"


def test_and_short_circuits_before_a_nil_pointer() -> None:
    src = "{{- if and .Par .Par.Tensor }} --tp {{ .Par.Tensor }}{{- end }}"
    assert render(src, Struct(Par=None)) == ""
    assert render(src, Struct(Par=Struct(Tensor=GoPtr(2)))) == " --tp 2"


def test_nil_pointer_and_unknown_field_are_errors() -> None:
    with pytest.raises(TemplateError, match="nil pointer evaluating"):
        render("{{ .Par.Tensor }}", Struct(Par=None))
    with pytest.raises(TemplateError, match="can't evaluate field Nope"):
        render("{{ .Nope }}", Struct(Par=None))
    with pytest.raises(TemplateError, match='map has no entry for key "x"'):
        render("{{ .M.x }}", Struct(M={}))


def test_functions_take_raw_strings_numbers_and_nil() -> None:
    out = render("{{ F .N `-sfx` 15 nil }}", Struct(N="n"), F=lambda a, b, c, d: f"{a}{b}{c}{d}")
    assert out == "n-sfx15None"
    with pytest.raises(TemplateError, match='function "G" not defined'):
        render("{{ G .N }}", Struct(N="n"))


def test_unbalanced_blocks_are_rejected() -> None:
    with pytest.raises(TemplateError, match=r"^template: template:1: unexpected EOF$"):
        GoTextTemplate("{{ if .A }}x")
    with pytest.raises(TemplateError, match=r"^template: template:1: unexpected \{\{end\}\}$"):
        GoTextTemplate("x{{ end }}")


def test_digest_covers_every_chain_read() -> None:
    template = GoTextTemplate("{{ .A }}{{ if .B.C }}{{ F .D }}{{ end }}", {"F": str})
    assert template.chains == (".A", ".B.C", ".D")
    data = Struct(A=1, B=None, D=2)
    assert template.digest(".B.C", data) == template.digest(".B.C", Struct(A=5, B=None, D=3))


def test_a_parse_error_in_one_string_is_reported_for_the_whole_document_as_kserve_parses_it() -> None:
    # ReplaceVariables parses the config's whole JSON as one template named "config"; the per-string fast path
    # hands any parse error to that whole-document parse, so the message is Go's for the document.
    with pytest.raises(InputError) as info:
        replace_variables({"a": "{{ .Spec }}", "b": {"c": "{{ nope .Spec }}"}}, Struct(Spec=Struct()))
    assert info.value.message == 'failed to parse template config: template: config:1: function "nope" not defined'
