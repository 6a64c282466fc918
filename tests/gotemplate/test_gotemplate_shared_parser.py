"""Both template kinds run on the one parser: same syntax, same errors, Go's wording.

Every expected message below is the one go1.19's text/template (and html/template) prints for the same template
and data shape (checked by running them); "in type …" names the Go type where the data carries it.
"""

from __future__ import annotations

import pytest

from kserve_compile.gotemplate import (
    GoPtr,
    GoTemplate,
    GoTextTemplate,
    Struct,
    TemplateError,
    object_meta_data,
    subset,
    text,
)
from kserve_compile.gotemplate import parse as parse_module
from kserve_compile.gotemplate.quote import go_quote, go_unquote


class _Values(Struct):
    go_type = "ingress.DomainTemplateValues"


DATA = _Values(Name="model", Namespace="test", IngressDomain="example.com", Labels={"l": "lv"}, Annotations={})


def _error(make: object, source: str) -> str:
    with pytest.raises(TemplateError) as info:
        make(source, name="t").render(DATA)  # type: ignore[operator]
    return str(info.value)


def test_both_kinds_call_the_one_parser() -> None:
    assert subset.parse is text.parse is parse_module.parse


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{}}", "template: t:1: missing value for command"),
        ("{{\n}}", "template: t:2: missing value for command"),
        ("{{ .Name", "template: t:1: unclosed action"),
        ("a\n{{ .Name\n\n", "template: t:4: unclosed action started at t:2"),
        ("{{ foo }}", 'template: t:1: function "foo" not defined'),
        ("x{{end}}", "template: t:1: unexpected {{end}}"),
        ("x{{else}}", "template: t:1: unexpected {{else}}"),
        ("{{ end x }}", 'template: t:1: unexpected "x" in end'),
        ("{{ /* c */ }}", 'template: t:1: unexpected "/" in command'),  # a comment must follow the delimiter
        ("{{/* c */ }}", "template: t:1: comment ends before closing delimiter"),
        ("{{/* c", "template: t:1: unclosed comment"),
        ('{{ .X "unterminated }}', "template: t:1: unterminated quoted string"),
        ('{{ foo "unterminated }}', 'template: t:1: function "foo" not defined'),  # Go's lazy lexer: parse first
        ("{{ .X (1 }}", "template: t:1: unclosed left paren"),
        ("{{ ( ) }}", "template: t:1: missing value for parenthesized pipeline"),
        ('{{ 1 | "a" }}', "template: t:1: non executable command in pipeline stage 2"),
        ("{{ true.any }}", 'template: t:1: unexpected . after term "true"'),
        ("{{a#}}", "template: t:1: bad character U+0023 '#'"),
        ("{{ 3x }}", 'template: t:1: bad number syntax: "3x"'),
        ('{{ "\\q" }}', "template: t:1: invalid syntax"),
    ],
)
def test_a_syntax_error_reads_the_same_from_both_kinds(source: str, message: str) -> None:
    assert _error(GoTemplate, source) == message
    assert _error(GoTextTemplate, source) == message


@pytest.mark.parametrize(
    ("source", "rendered"),
    [
        ("a  {{- .Name -}}  b", "amodelb"),
        ("a \r\n\t{{- .Name }} \n b", "amodel \n b"),
        ("a {{ .Name -}} \t\r\n b", "a modelb"),
        ("a\u00a0{{- .Name -}}\u000b b", "a\u00a0model\u000b b"),  # only ASCII space, \t, \r, \n are trimmed
        ("{{- .Name}}", "model"),
        ("a {{- /* c */ -}} b", "ab"),
        ("a {{/* c */ -}} b", "a b"),
        ("a {{- /* multi\nline */}} b", "a b"),
        ("{{/* one */}}{{/* two */}}{{ .Namespace }}", "test"),
        ('x{{ "}}" }}y', "x}}y"),  # the closing delimiter inside a string constant does not end the action
        ('{{ `raw` }}{{ "\\u00e9\\x41" }}{{ "é" }}', "rawéAé"),
    ],
)
def test_trim_markers_comments_and_constants_behave_the_same_in_both_kinds(source: str, rendered: str) -> None:
    assert GoTemplate(source).render(DATA) == rendered
    assert GoTextTemplate(source).render(DATA) == rendered


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "{{ .ModelName }}",
            'template: t:1:3: executing "t" at <.ModelName>: can\'t evaluate field ModelName in type '
            "ingress.DomainTemplateValues",
        ),
        ("{{ .Name.X }}", 'template: t:1:8: executing "t" at <.Name.X>: can\'t evaluate field X in type string'),
        (
            "line1\n  {{ .Nope }}",
            'template: t:2:5: executing "t" at <.Nope>: can\'t evaluate field Nope in type '
            "ingress.DomainTemplateValues",
        ),
        (
            '{{ index . "k" }}',
            'template: t:1:3: executing "t" at <index . "k">: error calling index: can\'t index item of type '
            "ingress.DomainTemplateValues",
        ),
    ],
)
def test_execution_errors_read_like_go_in_both_kinds(source: str, message: str) -> None:
    assert _error(GoTemplate, source) == message
    assert _error(GoTextTemplate, source) == message


def test_a_missing_key_then_index_differs_by_missingkey_option_as_in_go() -> None:
    source = '{{ index .Labels.absent "k" }}'
    assert _error(GoTemplate, source) == (
        'template: t:1:3: executing "t" at <index .Labels.absent "k">: error calling index: index of untyped nil'
    )
    assert _error(GoTextTemplate, source) == (  # missingkey=error stops at the missing key
        'template: t:1:16: executing "t" at <.Labels.absent>: map has no entry for key "absent"'
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ .Spec.M.zz }}", 'template: config:1:8: executing "config" at <.Spec.M.zz>: map has no entry for key "zz"'),
        ("{{ .Spec.Par.Nope }}", "can't evaluate field Nope in type *v1alpha2.ParallelismSpec"),
        ("{{ index .Spec.L 5 }}", "at <index .Spec.L 5>: error calling index: index out of range: 5"),
        (
            "{{ F }}{{ and }}",
            'template: config:1:10: executing "config" at <and>: wrong number of args for and: want at least 1 got 0',
        ),
        ('{{ ChildName "a" }}', "at <ChildName>: wrong number of args for ChildName: want 2 got 1"),
        ("{{ ne 1 2 3 }}", "at <ne>: wrong number of args for ne: want 2 got 3"),
        ("{{ eq 1 }}", "at <eq 1>: error calling eq: missing argument for comparison"),
        ("{{ len 3 }}", "at <len 3>: error calling len: len of type int"),
        ("{{ .On 1 }}", "at <.On>: On has arguments but cannot be invoked as function"),
        ('{{ "a" 1 }}', 'at <"a">: can\'t give argument to non-function "a"'),
        (
            "{{ (ChildName `b` `c`) 1 }}",
            '1:3: executing "config" at <(ChildName `b` `c`) 1>: can\'t give argument '
            "to non-function ChildName `b` `c`",
        ),
        ("{{ nil }}", "at <nil>: nil is not a command"),
    ],
)
def test_text_kind_execution_errors_read_like_go(source: str, message: str) -> None:
    class Par(Struct):
        go_type = "*v1alpha2.ParallelismSpec"

    data = Struct(Spec=Struct(Par=Par(Tensor=GoPtr(2)), M={"a": "x"}, L=["p", "q"]), On=True)
    funcs = {"F": lambda: "f", "ChildName": lambda a, b: a + b}
    with pytest.raises(TemplateError) as info:
        GoTextTemplate(source, funcs, name="config").render(data)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{{ if .Name }}", "this template kind supports only"),
        ("{{ .Name | .Namespace }}", "this template kind supports only"),
        ('{{ printf "%s" .Name }}', "this template kind supports only"),
        ("{{ index .Labels }}", "index needs a field and a key"),
        ("{{ index .Labels 1 }}", "index keys must be string literals"),
        ("{{ range .Labels }}", "range is not supported"),
        ("{{ $x := 1 }}", "variables are not supported"),
        ("{{ 1.5 }}", "floating-point constants are not supported"),
    ],
)
def test_the_restricted_kind_names_the_action_it_rejects(source: str, reason: str) -> None:
    message = _error(GoTemplate, source + "{{ end }}" if " if " in source or "range" in source else source)
    assert message.startswith(f"template: t:1: unsupported template action {go_quote(source)}: ")
    assert reason in message


def test_the_text_kind_rejects_go_builtins_it_does_not_execute() -> None:
    with pytest.raises(TemplateError, match=r'unsupported template action "\{\{ printf `%s` \.A \}\}": printf'):
        GoTextTemplate("{{ printf `%s` .A }}")
    assert GoTextTemplate("{{ printf }}", {"printf": lambda: "mine"}).render(None) == "mine"  # a caller's own


def test_missing_keys_print_as_go_prints_them() -> None:
    # a map field: <no value> (text), nothing (html); index of a map[string]string: its zero value, "" in both
    template = GoTemplate('{{ .Labels.absent }}|{{ index .Labels "absent" }}|{{ .Labels.l }}')
    assert template.render(DATA) == "<no value>||lv"
    assert template.render(DATA, html=True) == "||lv"


def test_placeholders_name_the_object_meta_type() -> None:
    meta = object_meta_data("m", "ns", {}, {})
    with pytest.raises(TemplateError, match=r"can't evaluate field Nope in type v1\.ObjectMeta$"):
        GoTemplate('{"a":"{{ .Nope }}"}', name="container-tmpl").render(meta, html=True)


@pytest.mark.parametrize(
    ("literal", "value"),
    [('"a\\tb"', "a\tb"), ('"\\x41\\101\\u00e9\\U0001F600"', "AAé😀"), ('"é"', "é"), ("`a\r\nb`", "a\nb")],
)
def test_go_unquote(literal: str, value: str) -> None:
    assert go_unquote(literal) == value


@pytest.mark.parametrize("literal", ['"\\\'"', '"\\400"', '"\\uD800"', '"a"b"', "`a`b`"])
def test_go_unquote_rejects_what_go_rejects(literal: str) -> None:
    with pytest.raises(ValueError, match="invalid syntax"):
        go_unquote(literal)


def test_go_quote() -> None:
    assert go_quote('a"\\\n\x01é\u200b') == '"a\\"\\\\\\n\\x01é\\u200b"'


@pytest.mark.parametrize("kind", [GoTemplate, GoTextTemplate])
def test_deep_nesting_is_an_error_not_a_crash(kind: object) -> None:
    with pytest.raises(TemplateError, match="max expression depth exceeded"):
        kind("{{" + "(" * 150 + "1" + ")" * 150 + "}}")  # type: ignore[operator]
    with pytest.raises(TemplateError, match="if actions nest at most 100 deep here"):
        kind("{{ if 1 }}" * 150 + "x" + "{{ end }}" * 150)  # type: ignore[operator]
    nested = "{{ if 1 }}" * 100 + "x" + "{{ end }}" * 100
    assert GoTextTemplate(nested).render(None) == "x"
