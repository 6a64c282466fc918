"""Go's own ``text/template`` test cases, ported for the constructs KServe's template kinds support.

Sources (golang/go): ``src/text/template/parse/parse_test.go`` (``parseTests`` in TestParse, ``errorTests`` in
TestErrors) and ``src/text/template/exec_test.go`` (``execTests`` in TestExecute, ``cmpTests`` in TestComparison,
TestMissingMapKey). Each case keeps Go's name; data stands in for Go's ``tVal`` with the fields the cases read.
"""

from __future__ import annotations

import pytest

from kserve_compile.gotemplate import GoPtr, GoTemplate, GoTextTemplate, Struct, TemplateError
from kserve_compile.gotemplate.nodes import tree_text
from kserve_compile.gotemplate.parse import parse

NO_ERROR, HAS_ERROR = True, False


# --- parse_test.go, parseTests (TestParse): the tree printed as Go's String() with text as %q -----------------------
@pytest.mark.parametrize(
    ("name", "source", "ok", "printed"),
    [
        ("empty", "", NO_ERROR, ""),
        ("comment", "{{/*\n\n\n*/}}", NO_ERROR, ""),
        ("spaces", " \t\n", NO_ERROR, '" \\t\\n"'),
        ("text", "some text", NO_ERROR, '"some text"'),
        ("emptyAction", "{{}}", HAS_ERROR, ""),
        ("field", "{{.X}}", NO_ERROR, "{{.X}}"),
        ("simple command", "{{printf}}", NO_ERROR, "{{printf}}"),
        ("multi-word command", "{{printf `%d` 23}}", NO_ERROR, "{{printf `%d` 23}}"),
        ("pipeline", "{{.X|.Y}}", NO_ERROR, "{{.X | .Y}}"),
        ("nested pipeline", "{{.X (.Y .Z) (.A | .B .C) (.E)}}", NO_ERROR, "{{.X (.Y .Z) (.A | .B .C) (.E)}}"),
        ("simple if", "{{if .X}}hello{{end}}", NO_ERROR, '{{if .X}}"hello"{{end}}'),
        ("if with else", "{{if .X}}true{{else}}false{{end}}", NO_ERROR, '{{if .X}}"true"{{else}}"false"{{end}}'),
        (
            "if with else if",
            "{{if .X}}true{{else if .Y}}false{{end}}",
            NO_ERROR,
            '{{if .X}}"true"{{else}}{{if .Y}}"false"{{end}}{{end}}',
        ),
        (
            "if else chain",
            "+{{if .X}}X{{else if .Y}}Y{{else if .Z}}Z{{end}}+",
            NO_ERROR,
            '"+"{{if .X}}"X"{{else}}{{if .Y}}"Y"{{else}}{{if .Z}}"Z"{{end}}{{end}}{{end}}"+"',
        ),
        ("trim left", "x \r\n\t{{- 3}}", NO_ERROR, '"x"{{3}}'),
        ("trim right", "{{3 -}}\n\n\ty", NO_ERROR, '{{3}}"y"'),
        ("trim left and right", "x \r\n\t{{- 3 -}}\n\n\ty", NO_ERROR, '"x"{{3}}"y"'),
        ("trim with extra spaces", "x\n{{-  3   -}}\ny", NO_ERROR, '"x"{{3}}"y"'),
        ("comment trim left", "x \r\n\t{{- /* hi */}}", NO_ERROR, '"x"'),
        ("comment trim right", "{{/* hi */ -}}\n\n\ty", NO_ERROR, '"y"'),
        ("comment trim left and right", "x \r\n\t{{- /* */ -}}\n\n\ty", NO_ERROR, '"x""y"'),
        ("newline in empty action", "{{\n}}", HAS_ERROR, ""),
        ("newline in pipeline", '{{\n"x"\n|\nprintf\n}}', NO_ERROR, '{{"x" | printf}}'),
        ("newline in comment", "{{/*\nhello\n*/}}", NO_ERROR, ""),
        ("newline in comment (trimmed)", "{{-\n/*\nhello\n*/\n-}}", NO_ERROR, ""),
        ("unclosed action", "hello{{range", HAS_ERROR, ""),
        ("unmatched end", "{{end}}", HAS_ERROR, ""),
        ("unmatched else", "{{else}}", HAS_ERROR, ""),
        ("unmatched else after if", "{{if .X}}hello{{end}}{{else}}", HAS_ERROR, ""),
        ("multiple else", "{{if .X}}1{{else}}2{{else}}3{{end}}", HAS_ERROR, ""),
        ("undefined function", "hello{{undefined}}", HAS_ERROR, ""),
        ("invalid punctuation", "{{printf 3, 4}}", HAS_ERROR, ""),
        ("dot applied to parentheses", "{{printf (printf .).}}", HAS_ERROR, ""),
        ("adjacent args", "{{printf 3`x`}}", HAS_ERROR, ""),
        ("adjacent args with .", "{{printf `x`.}}", HAS_ERROR, ""),
        ("extra end after if", "{{if .X}}a{{else if .Y}}b{{end}}{{end}}", HAS_ERROR, ""),
        ("dot after integer", "{{1.E}}", HAS_ERROR, ""),
        ("dot after boolean", "{{true.E}}", HAS_ERROR, ""),
        ("dot after string", '{{"hello".guys}}', HAS_ERROR, ""),
        ("dot after dot", "{{..E}}", HAS_ERROR, ""),
        ("dot after nil", "{{nil.E}}", HAS_ERROR, ""),
        ("wrong pipeline dot", "{{12|.}}", HAS_ERROR, ""),
        ("wrong pipeline number", "{{.|12|printf}}", HAS_ERROR, ""),
        ("wrong pipeline string", '{{.|printf|"error"}}', HAS_ERROR, ""),
        ("wrong pipeline boolean", "{{.|true}}", HAS_ERROR, ""),
        ("wrong pipeline nil", "{{12|nil}}", HAS_ERROR, ""),
        ("empty pipeline", '{{printf "%d" ( ) }}', HAS_ERROR, ""),
        ("paren nesting normal", "{{ (( 1 )) }}", NO_ERROR, "{{((1))}}"),
        ("paren nesting in pipeline", "{{ ((( 1 ))) | printf }}", NO_ERROR, "{{(((1))) | printf}}"),
        (
            "paren nesting with other constructs",
            "{{ if ((( true ))) }}YES{{ end }}",
            NO_ERROR,
            '{{if (((true)))}}"YES"{{end}}',
        ),
    ],
)
def test_go_parse_tests(name: str, source: str, ok: bool, printed: str) -> None:
    if not ok:
        with pytest.raises(TemplateError, match=r"^template: test:\d+: "):
            parse(source, "test")
        return
    assert tree_text(parse(source, "test"), "%q") == printed


# --- parse_test.go, errorTests (TestErrors): the message contains Go's -----------------------------------------------
@pytest.mark.parametrize(
    ("name", "source", "contains"),
    [
        ("unclosed1", "line1\n{{", "unclosed1:2: unclosed action"),
        ("unclosed3", 'line1\n{{"x"\n"y"\n', "unclosed3:4: unclosed action started at unclosed3:2"),
        ("unclosed4", "{{\n\n\n\n\n", "unclosed4:6: unclosed action started at unclosed4:1"),
        ("var1", "line1\n{{\nx\n}}", 'var1:3: function "x" not defined'),
        ("function", "{{foo}}", 'function "foo" not defined'),
        ("comment1", "{{/*}}", "comment1:1: unclosed comment"),
        ("comment2", "{{/*\nhello\n}}", "comment2:1: unclosed comment"),
        ("lparen", "{{.X (1 2 3}}", "unclosed left paren"),
        ("rparen", "{{.X 1 2 3 ) }}", "unexpected right paren"),
        ("rparen2", "{{(.X 1 2 3", "unclosed action"),
        ("space", "{{`x`3}}", "in operand"),
        ("idchar", "{{a#}}", "'#'"),
        ("charconst", "{{'a}}", "unterminated character constant"),
        ("stringconst", '{{"a}}', "unterminated quoted string"),
        ("rawstringconst", "{{`a}}", "unterminated raw quoted string"),
        ("number", "{{0xi}}", "number syntax"),
        ("wrongdot", "{{true.any}}", "unexpected . after term"),
        ("wrongpipeline", "{{12|false}}", "non executable command in pipeline"),
        ("emptypipeline", "{{ ( ) }}", "missing value for parenthesized pipeline"),
    ],
)
def test_go_error_tests(name: str, source: str, contains: str) -> None:
    with pytest.raises(TemplateError) as info:
        parse(source, name)
    assert contains in str(info.value)


# --- exec_test.go, execTests (TestExecute) ---------------------------------------------------------------------------
T_VAL = Struct(
    X="x",
    U=Struct(V="v"),
    I=17,
    MSI={"one": 1, "two": 2},
    SMSI=[{"one": 1, "two": 2}, {"eleven": 11, "twelve": 12}],
    SI=[3, 4, 5],
    SIEmpty=[],
    MSIEmpty={},
    PI=GoPtr(23),
    NIL=None,
    True_=True,
)


def _die() -> str:
    raise ValueError("die")


@pytest.mark.parametrize(
    ("name", "source", "expected", "data", "ok"),
    [
        ("empty", "", "", None, True),
        ("text", "some text", "some text", None, True),
        ("nil action", "{{nil}}", "", None, False),
        (".X", "-{{.X}}-", "-x-", T_VAL, True),
        (".U.V", "-{{.U.V}}-", "-v-", T_VAL, True),
        ("map .one", "{{.MSI.one}}", "1", T_VAL, True),
        ("map .WRONG args", "{{.MSI.one 1}}", "", T_VAL, False),
        ("dot int", "<{{.}}>", "<13>", 13, True),
        ("dot bool", "<{{.}}>", "<true>", True, True),
        ("dot string", "<{{.}}>", "<hello>", "hello", True),
        ("dot slice", "<{{.}}>", "<[-1 -2 -3]>", [-1, -2, -3], True),
        ("dot map", "<{{.}}>", "<map[two:22]>", {"two": 22}, True),
        ("*int", "{{.PI}}", "23", T_VAL, True),
        ("NIL", "{{.NIL}}", "<nil>", T_VAL, True),
        ("unparenthesized non-function", "{{1 2}}", "", None, False),
        ("parenthesized non-function", "{{(1) 2}}", "", None, False),
        ("parenthesized non-function with no args", "{{(1)}}", "1", None, True),
        ("if true", "{{if true}}TRUE{{end}}", "TRUE", T_VAL, True),
        ("if false", "{{if false}}TRUE{{else}}FALSE{{end}}", "FALSE", T_VAL, True),
        ("if nil", "{{if nil}}TRUE{{end}}", "", T_VAL, False),
        ("if 1", "{{if 1}}NON-ZERO{{else}}ZERO{{end}}", "NON-ZERO", T_VAL, True),
        ("if 0", "{{if 0}}NON-ZERO{{else}}ZERO{{end}}", "ZERO", T_VAL, True),
        ("if nonNilPointer", "{{if .PI}}NON-ZERO{{else}}ZERO{{end}}", "NON-ZERO", T_VAL, True),
        ("if nilPointer", "{{if .NIL}}NON-ZERO{{else}}ZERO{{end}}", "ZERO", T_VAL, True),
        ("if emptystring", "{{if ``}}NON-EMPTY{{else}}EMPTY{{end}}", "EMPTY", T_VAL, True),
        ("if string", "{{if `notempty`}}NON-EMPTY{{else}}EMPTY{{end}}", "NON-EMPTY", T_VAL, True),
        ("if emptyslice", "{{if .SIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}", "EMPTY", T_VAL, True),
        ("if slice", "{{if .SI}}NON-EMPTY{{else}}EMPTY{{end}}", "NON-EMPTY", T_VAL, True),
        ("if emptymap", "{{if .MSIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}", "EMPTY", T_VAL, True),
        ("if map", "{{if .MSI}}NON-EMPTY{{else}}EMPTY{{end}}", "NON-EMPTY", T_VAL, True),
        ("if else if", "{{if false}}FALSE{{else if true}}TRUE{{end}}", "TRUE", T_VAL, True),
        ("if else chain", "{{if eq 1 3}}1{{else if eq 2 3}}2{{else if eq 3 3}}3{{end}}", "3", T_VAL, True),
        ("not", "{{not true}} {{not false}}", "false true", None, True),
        ("and", "{{and false 0}} {{and 1 0}} {{and 0 true}} {{and 1 1}}", "false 0 0 1", None, True),
        ("or", "{{or 0 0}} {{or 1 0}} {{or 0 true}} {{or 1 1}}", "0 1 true 1", None, True),
        ("or short-circuit", "{{or 0 1 (die)}}", "1", None, True),
        ("and short-circuit", "{{and 1 0 (die)}}", "0", None, True),
        ("or short-circuit2", "{{or 0 0 (die)}}", "", None, False),
        ("and short-circuit2", "{{and 1 1 (die)}}", "", None, False),
        ("and pipe-true", "{{1 | and 1}}", "1", None, True),
        ("and pipe-false", "{{0 | and 1}}", "0", None, True),
        ("or pipe-true", "{{1 | or 0}}", "1", None, True),
        ("or pipe-false", "{{0 | or 0}}", "0", None, True),
        ("boolean if", "{{if and true 1 `hi`}}TRUE{{else}}FALSE{{end}}", "TRUE", T_VAL, True),
        ("boolean if not", "{{if and true 1 `hi` | not}}TRUE{{else}}FALSE{{end}}", "FALSE", None, True),
        ("boolean if pipe", "{{if true | not | and 1}}TRUE{{else}}FALSE{{end}}", "FALSE", None, True),
        ("slice[0]", "{{index .SI 0}}", "3", T_VAL, True),
        ("slice[1]", "{{index .SI 1}}", "4", T_VAL, True),
        ("slice[HUGE]", "{{index .SI 10}}", "", T_VAL, False),
        ("slice[WRONG]", "{{index .SI `hello`}}", "", T_VAL, False),
        ("slice[nil]", "{{index .SI nil}}", "", T_VAL, False),
        ("map[one]", "{{index .MSI `one`}}", "1", T_VAL, True),
        ("map[WRONG]", "{{index .MSI 10}}", "", T_VAL, False),
        ("double index", "{{index .SMSI 1 `eleven`}}", "11", T_VAL, True),
        ("nil[1]", "{{index nil 1}}", "", T_VAL, False),
        ("len of int", "{{len 3}}", "", T_VAL, False),
        ("or as if true", '{{or .SI "slice is empty"}}', "[3 4 5]", T_VAL, True),
        ("or as if false", '{{or .SIEmpty "slice is empty"}}', "slice is empty", T_VAL, True),
    ],
)
def test_go_exec_tests(name: str, source: str, expected: str, data: object, ok: bool) -> None:
    template = GoTextTemplate(source, {"die": _die})
    if not ok:
        with pytest.raises(TemplateError, match=r"^template: template:"):
            template.render(data)
        return
    assert template.render(data) == expected


# --- exec_test.go, cmpTests (TestComparison) -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "truth"),
    [
        ("eq true true", "true"),
        ("eq true false", "false"),
        ("eq 1 1", "true"),
        ("eq 1 2", "false"),
        ("eq `xy` `xy`", "true"),
        ("eq `xy` `xyz`", "false"),
        ("eq 3 4 5 6 3", "true"),
        ("eq 3 4 5 6 7", "false"),
        ("ne true true", "false"),
        ("ne true false", "true"),
        ("ne 1 1", "false"),
        ("ne 1 2", "true"),
        ("ne `xy` `xy`", "false"),
        ("ne `xy` `xyz`", "true"),
    ],
)
def test_go_comparison(expr: str, truth: str) -> None:
    assert GoTextTemplate("{{" + expr + "}}").render(None) == truth


def test_go_missing_map_key() -> None:
    # TestMissingMapKey: by default a missing key prints <no value>; missingkey=error (the LLM kind) fails.
    data = {"x": 99}
    assert GoTemplate("{{.x}} {{.y}}", name="t1").render(data) == "99 <no value>"
    with pytest.raises(TemplateError, match=r'map has no entry for key "y"'):
        GoTextTemplate("{{.x}} {{.y}}", name="t1").render(data)
