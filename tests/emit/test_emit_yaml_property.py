"""Property: any JSON-shaped tree with hostile strings reads back equal in YAML 1.1 and 1.2."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kserve_compile.emit import dump_yaml

from .hazards import HAZARDS, PLAIN
from .readback import assert_reads_back

# Characters that build YAML hazards: indicators, digits, number/date punctuation, whitespace,
# line breaks of both YAML versions, BOM, controls, non-ASCII.
_HOSTILE_ALPHABET = (
    "aeinoy lnstruxfEINOY0123456789+-._:#&*!|>'\"%@`?,[]{}~<=\\/ \t\n\r"
    "\x00\x07\x1b\x7f\x85\x9f\u00a0\u2028\u2029\ufeff\ufffeé日😀"
)

hostile_text = st.one_of(
    st.sampled_from(HAZARDS + PLAIN),
    st.text(alphabet=_HOSTILE_ALPHABET, max_size=12),
    st.text(max_size=20),  # any code point hypothesis likes (no surrogates)
    st.builds(lambda a, b: a + b, st.sampled_from(HAZARDS + PLAIN), st.text(alphabet=_HOSTILE_ALPHABET, max_size=4)),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(hostile_text, children, max_size=4),
    ),
    max_leaves=25,
)
documents = st.lists(st.dictionaries(hostile_text, trees, max_size=5), max_size=3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_any_tree_reads_back_unchanged(objs: list[dict]) -> None:
    text = dump_yaml(objs)
    assert_reads_back(text, objs)
    assert dump_yaml(objs) == text  # the per-call cache changes nothing


multiline_text = st.lists(st.text(alphabet="ab #:-|\t\\'\"", max_size=5), min_size=2, max_size=6).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(multiline_text, st.integers(min_value=0, max_value=3))
def test_any_multiline_string_reads_back_at_any_depth(s: str, depth: int) -> None:
    """Literal blocks (empty lines, indentation, the per-call cache) at any depth, as a value and as an item."""
    value: object = s
    for _ in range(depth):
        value = {"k": [value, s]}
    objs = [{"v": value, "w": s}]
    assert_reads_back(dump_yaml(objs), objs)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_HOSTILE_ALPHABET, min_size=1, max_size=10))
def test_any_short_hostile_string_reads_back_as_key_and_value(s: str) -> None:
    objs = [{s: s, "seq": [s, {s: [s]}]}]
    assert_reads_back(dump_yaml(objs), objs)
