"""``-o json``: one object as itself, several as a v1 List; sorted keys, 2-space indent."""

from __future__ import annotations

import json

import pytest

from kserve_compile.emit import dump_json

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "labels": {"b": "on", "a": "0755"}}}
SVC = {"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}


def test_single_object_is_written_as_itself() -> None:
    text = dump_json([POD])
    assert text == (
        "{\n"
        '  "apiVersion": "v1",\n'
        '  "kind": "Pod",\n'
        '  "metadata": {\n'
        '    "labels": {\n'
        '      "a": "0755",\n'
        '      "b": "on"\n'
        "    },\n"
        '    "name": "p"\n'
        "  }\n"
        "}\n"
    )


def test_several_objects_are_a_list_in_the_given_order() -> None:
    text = dump_json([SVC, POD])
    doc = json.loads(text)
    assert doc == {"apiVersion": "v1", "kind": "List", "items": [SVC, POD]}
    assert text.index('"apiVersion": "v1",\n  "items"') == 4  # sorted keys at the top level too
    assert text.endswith("}\n")


def test_no_objects_are_an_empty_list() -> None:
    assert json.loads(dump_json([])) == {"apiVersion": "v1", "kind": "List", "items": []}


def test_unicode_is_written_as_utf8_not_escaped() -> None:
    assert '"é😀"' in dump_json([{"kind": "X", "v": "é😀"}])


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"f": float("nan")}}, "Pod/p: spec.f: nan"),
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": [{"x": object()}]}, "Pod/p: spec[0].x: cannot write"),
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {("t",): 1}}, "Pod/p: spec: mapping key ('t',)"),
    ],
)
def test_bad_values_are_named_by_object_and_field(obj: dict, message: str) -> None:
    with pytest.raises((TypeError, ValueError)) as caught:
        dump_json([obj])
    assert str(caught.value).startswith(message)


def test_integers_beyond_64_bits_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="cannot write JSON"):
        dump_json([{"kind": "X", "n": 1 << 70}])
