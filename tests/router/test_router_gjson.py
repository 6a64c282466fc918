"""gjson path evaluation against the examples of gjson's SYNTAX.md and the conditions KServe's tests use."""

from __future__ import annotations

import orjson
import pytest

from router.gjson import MISSING, exists, get

DOC = orjson.loads(b"""{
  "name": {"first": "Tom", "last": "Anderson"}, "age": 37, "children": ["Sara", "Alex", "Jack"],
  "fav.movie": "Deer Hunter",
  "friends": [
    {"first": "Dale", "last": "Murphy", "age": 44, "nets": ["ig", "fb", "tw"]},
    {"first": "Roger", "last": "Craig", "age": 68, "nets": ["fb", "tw"]},
    {"first": "Jane", "last": "Murphy", "age": 47, "nets": ["ig", "tw"]}
  ]
}""")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("name.last", "Anderson"),
        ("age", 37),
        ("children", ["Sara", "Alex", "Jack"]),
        ("children.0", "Sara"),
        ("children.1", "Alex"),
        ("friends.1.first", "Roger"),
        ("child*.2", "Jack"),
        ("c?ildren.0", "Sara"),
        (r"fav\.movie", "Deer Hunter"),
        ("friends.#", 3),
        ("friends.#.age", [44, 68, 47]),
        ('friends.#(last=="Murphy").first', "Dale"),
        ('friends.#(last=="Murphy")#.first', ["Dale", "Jane"]),
        ("friends.#(age>45)#.last", ["Craig", "Murphy"]),
        ('friends.#(first%"D*").last', "Murphy"),
        ('friends.#(first!%"D*").last', "Craig"),
        ('children.#(!%"*a*")', "Alex"),
        ('children.#(%"*a*")#', ["Sara", "Jack"]),
        ('friends.#(nets.#(=="fb"))#.first', ["Dale", "Roger"]),
        ("friends|0.first", "Dale"),
        ("friends.0|first", "Dale"),
        ('friends.#(last="Murphy")#.0', []),
        ('friends.#(last="Murphy")#|#', 2),
        ("children.@reverse", ["Jack", "Alex", "Sara"]),
        ("children.@reverse.0", "Jack"),
        ("@this.age", 37),
        ("[name.first,age]", ["Tom", 37]),
        (
            '{name.first,age,"the_murphys":friends.#(last="Murphy")#.first}',
            {"first": "Tom", "age": 37, "the_murphys": ["Dale", "Jane"]},
        ),
        ("friends.0.nets.#", 3),
        ("name.@keys", ["first", "last"]),
    ],
)
def test_syntax_examples(path: str, expected: object) -> None:
    assert get(DOC, path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "nope",
        "name.middle",
        "children.9",
        'friends.#(last=="Smith").first',
        'friends.#(last="Murphy")#|first',
        "age.x",
        "children.x",
    ],
)
def test_missing(path: str) -> None:
    assert get(DOC, path) is MISSING


TILDE = orjson.loads(b"""{"vals": [{"a": 1, "b": "data"}, {"a": 2, "b": true}, {"a": 3, "b": false}, {"a": 4, "b": "0"},
  {"a": 5, "b": 0}, {"a": 6, "b": "1"}, {"a": 7, "b": 1}, {"a": 8, "b": "true"}, {"a": 9, "b": false},
  {"a": 10, "b": null}, {"a": 11}]}""")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("vals.#(b==~true)#.a", [2, 6, 7, 8]),
        ("vals.#(b==~false)#.a", [3, 4, 5, 9, 10, 11]),
        ("vals.#(b==~null)#.a", [10, 11]),
        ("vals.#(b==~*)#.a", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        ("vals.#(b!=~*)#.a", [11]),
    ],
)
def test_tilde(path: str, expected: list[int]) -> None:
    assert get(TILDE, path) == expected


def test_kserve_conditions() -> None:
    request = {"instances": [{"modelId": "2"}]}
    assert exists(request, 'instances.#(modelId=="2")')
    assert not exists(request, 'instances.#(modelId=="1")')
    response = {"predictions": [{"label": "dog", "score": [0.8, 0.2]}]}
    assert exists(response, 'predictions.#(label=="dog")')
    assert not exists(response, 'predictions.#(label=="cat")')


def test_golden_switch_conditions_on_the_whole_request() -> None:
    # golden/graph-switch-knative: "[@this].#(version==...)" queries the request object itself
    assert exists({"version": "v2"}, '[@this].#(version=="v2")')
    assert not exists({"version": "v2"}, '[@this].#(version=="v1")')
    assert exists({"version": "v3"}, '[@this].#(version!="")')
    assert not exists({"x": 1}, '[@this].#(version!="")')


def test_numbers_compare_numerically_whatever_the_quotes() -> None:
    assert exists({"a": [{"n": 1}]}, 'a.#(n=="1")')  # gjson parses the query value as a float for a number
    assert exists({"a": [{"n": 10}]}, "a.#(n>9)")
    assert not exists({"a": [{"n": "10"}]}, "a.#(n>9)")  # strings compare as strings: "10" < "9"


def test_null_exists_and_scalars_have_no_paths() -> None:
    assert exists({"a": None}, "a")
    assert not exists(5, "a")
    assert not exists({"a": 1}, "")
    assert get([[1, [2]], 3], "@flatten") == [1, [2], 3]
    assert get([[1, [2]], 3], '@flatten:{"deep":true}') == [1, 2, 3]
    assert get({"a": 1}, "!true") is True
