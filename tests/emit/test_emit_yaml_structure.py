"""Layout, determinism and errors of the YAML stream."""

from __future__ import annotations

import enum
import random
from collections import OrderedDict

import pytest

from kserve_compile.emit import dump_json, dump_yaml, sort_objects

from .readback import assert_reads_back
from .shapes import isvc_objects, kserve_objects

EXPECTED = """\
---
apiVersion: v1
data:
  empty.list: []
  empty.map: {}
  list:
  - b
  - a
  - - 1
    - - 2
  - k: v
    z:
    - x
  - {}
  - []
  - null
kind: ConfigMap
metadata:
  name: demo
  namespace: default
---
{}
"""


def test_layout_is_block_style_with_sorted_keys() -> None:
    obj = {
        "metadata": {"namespace": "default", "name": "demo"},
        "kind": "ConfigMap",
        "data": {
            "list": ["b", "a", [1, [2]], {"z": ["x"], "k": "v"}, {}, [], None],
            "empty.map": {},
            "empty.list": [],
        },
        "apiVersion": "v1",
    }
    text = dump_yaml([obj, {}])
    assert text == EXPECTED
    assert_reads_back(text, [obj, {}])


def test_no_objects_give_empty_text_and_every_document_ends_with_newline() -> None:
    assert dump_yaml([]) == ""
    text = dump_yaml(isvc_objects(1))
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.count("---\n") == 4 and text.startswith("---\n")


def test_kserve_shaped_objects_read_back_in_both_yaml_versions() -> None:
    objs = sort_objects(kserve_objects(25))
    assert_reads_back(dump_yaml(objs), objs)


def test_same_objects_in_any_order_give_the_same_bytes() -> None:
    objs = kserve_objects(12)
    expected = dump_yaml(sort_objects(objs))
    rng = random.Random(7)
    for _ in range(5):
        shuffled = [_reinsert_keys(o, rng) for o in objs]
        rng.shuffle(shuffled)
        assert dump_yaml(sort_objects(shuffled)) == expected


def _reinsert_keys(node: object, rng: random.Random) -> object:
    """The same tree with every mapping's insertion order shuffled."""
    if isinstance(node, dict):
        keys = list(node)
        rng.shuffle(keys)
        return {k: _reinsert_keys(node[k], rng) for k in keys}
    if isinstance(node, list):
        return [_reinsert_keys(v, rng) for v in node]
    return node


def test_long_keys_use_the_explicit_form() -> None:
    long_key, wide_key = "k" * 1500, "é" * 600  # 600 characters, 1,200 bytes
    objs = [{long_key: {"a": 1}, "b": [long_key], "c": {long_key: [1, 2]}, "d": [{long_key: "v\nw"}], wide_key: 1}]
    text = dump_yaml(objs)
    assert f"? {long_key}\n:\n  a: 1\n" in text
    assert f'? "{wide_key}"\n: 1\n' in text
    assert_reads_back(text, objs)


def test_lines_are_never_folded() -> None:
    long_value = " ".join(["word"] * 2000)
    text = dump_yaml([{"v": long_value, "q": "on " * 500}])
    assert f"v: {long_value}\n" in text
    assert len(text.splitlines()) == 3


class Color(str, enum.Enum):
    RED = "on"


class Size(enum.IntEnum):
    BIG = 3


def test_subclasses_and_tuples_are_written_as_their_base_types() -> None:
    obj = OrderedDict([("z", Color.RED), ("a", (1, Size.BIG, ())), ("m", OrderedDict())])
    text = dump_yaml([obj])
    assert text == '---\na:\n- 1\n- 3\n- []\nm: {}\nz: "on"\n'


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": {1: "a"}}}, "Pod/p: spec.x: mapping key 1"),
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": [1, {"y": {2, 3}}]}}, "Pod/p: spec.x[1].y: "),
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"r": float("nan")}}, "Pod/p: spec.r: nan"),
        ({"kind": "Pod", "metadata": {"name": "p", "namespace": "n"}, "a": float("-inf")}, "Pod/n/p: a: -inf"),
        ({"kind": "Pod", "x": {"a": 1, 2: "b"}}, "Pod: x: mapping key 2"),
    ],
)
def test_bad_values_are_named_by_object_and_field(obj: dict, message: str) -> None:
    with pytest.raises((TypeError, ValueError)) as caught:
        dump_yaml([obj])
    assert str(caught.value).startswith(message)


def test_a_tree_that_contains_itself_is_refused_not_looped_on() -> None:
    obj: dict = {"kind": "X", "spec": {}}
    obj["spec"]["self"] = obj
    with pytest.raises(ValueError, match=r"^X: spec\.self\.spec\.self.*contains itself"):
        dump_yaml([obj])
    with pytest.raises(ValueError, match="contains itself"):
        dump_json([obj])


def test_non_mapping_document_is_refused() -> None:
    with pytest.raises(TypeError, match="list"):
        dump_yaml([[1, 2]])  # type: ignore[list-item]
