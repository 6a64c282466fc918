"""Scalars: what is quoted, what stays plain, and that every form reads back unchanged."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import pytest

from kserve_compile.emit import dump_yaml
from kserve_compile.emit.yaml_text import yaml_document

from .hazards import HAZARDS, PLAIN
from .readback import assert_reads_back, pyyaml_all


def _value_line(s: str) -> str:
    """The text after ``v:`` for a one-key document."""
    text = dump_yaml([{"v": s}])
    assert text.startswith("---\nv:")
    return text[len("---\nv:") :]


@pytest.mark.parametrize("s", HAZARDS, ids=repr)
def test_hazard_is_never_plain_and_reads_back(s: str) -> None:
    rendered = _value_line(s)
    assert rendered[0] == " "
    assert rendered[1] in '"|', f"{s!r} written unquoted: {rendered!r}"
    objs = [{"v": s, s: s, "l": [s, [s], {s: [s]}]}]
    assert_reads_back(dump_yaml(objs), objs)


@pytest.mark.parametrize("s", PLAIN, ids=repr)
def test_ordinary_strings_stay_plain(s: str) -> None:
    assert _value_line(s) == f" {s}\n"
    objs = [{"v": s, s: [s]}]
    assert_reads_back(dump_yaml(objs), objs)


def test_hazards_read_back_through_kubectl_yaml_1_1_decoder(tmp_path) -> None:
    """kubectl decodes a kubeconfig with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1), offline.

    Every hazard goes into typed string fields (exec args and env values), where an unquoted
    ``on`` or ``0755`` makes kubectl fail with "cannot unmarshal bool/number into ... string",
    and into a free-form extension as keys and values.
    """
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl must be on PATH (it is in CI and on the dev machine)"
    # Go's JSON encoding cannot carry lone surrogates, NUL is refused by Go's JSON decoder.
    strings = [s for s in HAZARDS + PLAIN if not re.search("[\ud800-\udfff\x00]", s)]
    data = {s: s for s in strings} | {"k" * 1500: "explicit key", "é" * 600: "explicit key, by bytes"}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [],
        "contexts": [],
        "current-context": "",
        "preferences": {},
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": "true",
                        "args": strings,
                        "env": [{"name": f"E{i}", "value": s} for i, s in enumerate(strings)],
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "extensions": [{"name": "x", "extension": {"kind": "X", "data": data, "f": 1.5e-07, "i": 1 << 40}}],
    }
    path = tmp_path / "kubeconfig.yaml"
    path.write_text(yaml_document(config), encoding="utf-8")
    done = subprocess.run(
        [kubectl, "config", "view", "--kubeconfig", str(path), "--raw", "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    exec_ = seen["users"][0]["user"]["exec"]
    assert exec_["args"] == strings
    assert [e["value"] for e in exec_["env"]] == strings
    assert seen["extensions"][0]["extension"]["data"] == data
    assert seen["extensions"][0]["extension"]["f"] == 1.5e-07


def test_literal_blocks_for_readable_multiline_strings() -> None:
    assert _value_line("a\nb") == " |-\n  a\n  b\n"
    assert _value_line("a\n\nb\n") == " |\n  a\n\n  b\n"
    nested = dump_yaml([{"l": ["x\ny\n", {"k": "p\nq"}]}])
    assert nested == "---\nl:\n- |\n  x\n  y\n- k: |-\n    p\n    q\n"
    assert_reads_back(nested, [{"l": ["x\ny\n", {"k": "p\nq"}]}])


def test_literal_blocks_keep_runs_of_empty_lines_empty() -> None:
    assert _value_line("a\n\n\nb") == " |-\n  a\n\n\n  b\n"
    assert _value_line("a\n\n\n\nb\n") == " |\n  a\n\n\n\n  b\n"


def test_one_literal_at_two_depths_in_one_stream() -> None:
    """The literal cache is per (text, indent): a text met again deeper is indented for its new place."""
    script = "set -e\n\nexec  serve \\\n  --port 8000\n"
    objs = [{"a": script, "b": [{"c": script}], "d": {"e": {"f": script}}}, {"a": script}]
    text = dump_yaml(objs)
    assert "a: |\n  set -e\n\n  exec  serve \\\n    --port 8000\n" in text
    assert "- c: |\n    set -e\n\n    exec  serve \\\n      --port 8000\n" in text
    assert "    f: |\n      set -e\n\n      exec  serve \\\n        --port 8000\n" in text
    assert_reads_back(text, objs)


@pytest.mark.parametrize("s", ["\na", " a\nb", "a \nb", "a\nb\n\n", "a\n\tb", "a\r\nb", "a\u2028\nb"], ids=repr)
def test_ambiguous_multiline_strings_are_quoted(s: str) -> None:
    assert _value_line(s).startswith(' "')


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("tab\there", r'"tab\there"'),
        ("\u2028", r'"\u2028"'),
        ("\x85", r'"\u0085"'),
        ("\ufeffx", r'"\ufeffx"'),
        ("\x7f", r'"\u007f"'),
        ("\x00", r'"\u0000"'),
        ("é", '"é"'),
        ("😀", '"😀"'),
        ('"hi" there', r'"\"hi\" there"'),
    ],
)
def test_quoted_form_escapes_only_what_it_must(s: str, expected: str) -> None:
    assert _value_line(s) == f" {expected}\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-7, "-7"),
        (1 << 70, str(1 << 70)),
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (0.1, "0.1"),
        (1e-05, "1.0e-05"),
        (1.5e300, "1.5e+300"),
        (1e16, "1.0e+16"),
    ],
)
def test_non_string_scalars(value: object, expected: str) -> None:
    assert _value_line(value) == f" {expected}\n"  # type: ignore[arg-type]
    [back] = pyyaml_all(dump_yaml([{"v": value}]))
    assert back == {"v": value} and type(back["v"]) is type(value)
    assert_reads_back(dump_yaml([{"v": value}]), [{"v": value}])


def test_float_round_trip_is_exact() -> None:
    values = [math.pi, 1 / 3, 2.0**-1074, 1.7976931348623157e308, 123456789.123456789, 5e-324, 1e22, 1e21]
    assert_reads_back(dump_yaml([{"f": values}]), [{"f": values}])


@pytest.mark.parametrize("code", range(0x80))
def test_ascii_literal_check_agrees_with_the_literal_syntax(code: int) -> None:
    """ASCII text takes a fast path past ``_LITERAL_SYNTAX``; every ASCII character, first and inside, decides alike."""
    from kserve_compile.emit.yaml_text import _LITERAL_SYNTAX, _is_literal

    c = chr(code)
    for s in (f"a\n{c}b", f"{c}\nb", f"a{c}\nb\n", f"a\n\n{c}"):
        by_regex = bool(_LITERAL_SYNTAX.match(s)) and " \n" not in s and not s.endswith((" ", "\n\n"))
        assert _is_literal(s) is by_regex, repr(s)
