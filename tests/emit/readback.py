"""Read emitted YAML back with the parsers our users' tools embed."""

from __future__ import annotations

import io
import re

import yaml
from ruamel.yaml import YAML

_ruamel_12 = YAML(typ="safe", pure=True)  # YAML 1.2 as ruamel reads it (it also knows timestamps, "<<")


class Core12Loader(yaml.SafeLoader):
    """Strict YAML 1.2 core schema, as go-yaml v3 (kustomize's kyaml) resolves plain scalars."""


Core12Loader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in [
    ("null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
]:
    Core12Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_regexp), list(_first))
Core12Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])


def _core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = loader.construct_scalar(node)
    return int(value, 0) if value[:2] in ("0o", "0x") else int(value, 10)


Core12Loader.add_constructor("tag:yaml.org,2002:int", _core_int)


def pyyaml_all(text: str) -> list:
    """YAML 1.1, PyYAML's pure-Python and libyaml loaders (they must agree)."""
    pure = list(yaml.load_all(text, Loader=yaml.SafeLoader))
    fast = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    assert pure == fast
    return pure


def ruamel_all(text: str) -> list:
    return list(_ruamel_12.load_all(io.StringIO(text)))


def core12_all(text: str) -> list:
    return list(yaml.load_all(text, Loader=Core12Loader))


def assert_reads_back(text: str, objs: list) -> None:
    assert pyyaml_all(text) == objs
    assert ruamel_all(text) == objs
    assert core12_all(text) == objs
