"""GJSON paths evaluated on decoded JSON, as ``github.com/tidwall/gjson`` (v1.18, the version KServe's router uses).

KServe's router only asks whether a path *exists* (``gjson.GetBytes(body, condition).Exists()``): a Switch step's
condition on the request, a Sequence step's condition on the previous response. This module implements the path
syntax of gjson's ``SYNTAX.md`` that such conditions use:

* keys with ``\\`` escapes and the ``*``/``?`` wildcards, array indexes, ``.`` and ``|`` separators;
* ``#`` (array length), ``#.path`` (map over the elements), queries ``#(...)`` (first match) and ``#(...)#``
  (all matches) with ``==``/``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``%`` (like), ``!%`` (not like), the ``~``
  boolean conversions, value-only queries (``#(=="x")``) and nested queries;
* the modifiers ``@this``, ``@reverse``, ``@flatten``, ``@keys``, ``@values``, ``@valid``, ``@ugly``, ``@pretty``;
* multipaths ``[a,b]`` and ``{a,"name":b}``, and ``!`` literals.

Values are Python data as ``orjson.loads`` returns it; :data:`MISSING` stands for "does not exist" (JSON ``null``
exists). Comparisons follow gjson's ``queryMatches``: a string value compares as a string with the query's value
(quotes removed), a number compares numerically with it, whatever quotes the query used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_MODIFIER_END = ".|:"


def exists(doc: Any, path: str) -> bool:
    """``gjson.Get(json, path).Exists()`` for the decoded document ``doc``."""
    return get(doc, path) is not MISSING


def get(doc: Any, path: str) -> Any:
    """The value ``path`` selects in ``doc``, or :data:`MISSING`."""
    if len(path) > 1:
        if path[0] == "@":
            done = _modifier(doc, path)
            if done is not None:
                return done
        elif path[0] == "!":
            done = _literal(path)
            if done is not None:
                return done
        elif path[0] in "[{":
            done = _multipath(doc, path)
            if done is not None:
                return done
    if isinstance(doc, dict):
        return _object(doc, path)
    if isinstance(doc, list):
        return _array(doc, path)
    return MISSING


def _then(value: Any, rest: str) -> Any:
    """Apply what follows a component: ``.x`` or ``|x`` continue on ``value``; nothing returns it."""
    if value is MISSING or not rest:
        return value
    return get(value, rest[1:])


# --- objects ------------------------------------------------------------------------------------------------------


def _object(obj: dict[str, Any], path: str) -> Any:
    part, rest, wild = _split_key(path)
    if wild:
        regex = _wildcard(part)
        for key, value in obj.items():
            if regex.fullmatch(key):
                return _then(value, rest)
        return MISSING
    value = obj.get(_unescape_key(part), MISSING)
    return _then(value, rest)


@lru_cache(maxsize=1024)  # a graph's conditions are few and fixed; scanning them char by char was per request
def _split_key(path: str) -> tuple[str, str, bool]:
    """(component, rest starting with its separator, has wildcards), as gjson's ``parseObjectPath``."""
    wild = False
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "*?":
            wild = True
        elif ch in ".|":
            return path[:i], path[i:], wild
        i += 1
    return path, "", wild


def _unescape_key(part: str) -> str:
    return re.sub(r"\\(.)", r"\1", part) if "\\" in part else part


@lru_cache(maxsize=256)
def _wildcard(pattern: str) -> re.Pattern[str]:
    """tidwall/match: ``*`` any run of characters, ``?`` one character, ``\\`` escapes the next one."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


# --- arrays -------------------------------------------------------------------------------------------------------


def _array(arr: list[Any], path: str) -> Any:
    if path.startswith(("#(", "#[")):
        return _query(arr, path)
    if path == "#" or path.startswith("#|"):
        return _then(len(arr), path[1:])
    if path.startswith("#."):
        return _map(arr, path[2:])
    part, rest, _ = _split_key(path)
    if not part.isdigit() or not part.isascii():
        return MISSING
    index = int(part)
    return _then(arr[index] if index < len(arr) else MISSING, rest)


def _map(arr: list[Any], key: str) -> Any:
    """``#.key``: ``key`` on every element (those where it exists); a ``|`` part applies to the resulting list."""
    left, right = _split_pipe(key)
    out = [v for v in (get(item, left) for item in arr) if v is not MISSING]
    return out if right is None else get(out, right)


def _split_pipe(path: str) -> tuple[str, str | None]:
    """Split at the first ``|`` outside brackets and strings (gjson's ``splitPossiblePipe``)."""
    depth = 0
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            i = _string_end(path, i)
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "|" and depth == 0:
            return path[:i], path[i + 1 :]
        i += 1
    return path, None


def _string_end(text: str, i: int) -> int:
    """Index of the quote closing the string that opens at ``text[i]``."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return i


class _Query:
    __slots__ = ("all", "op", "path", "rest", "value")

    def __init__(self, path: str, op: str, value: str, all_: bool, rest: str) -> None:
        self.path, self.op, self.value, self.all, self.rest = path, op, value, all_, rest


_OPS = ("!=", "!%", "<=", ">=", "==", "<", ">", "=", "%")


@lru_cache(maxsize=256)
def _parse_query(path: str) -> _Query | None:
    """``#(path op value)`` with what follows it; ``None`` for an unbalanced query (gjson's ``parseQuery``)."""
    depth = 1
    i = 2
    split = 0
    while i < len(path):
        ch = path[i]
        if depth == 1 and split == 0 and ch in "!=<>%":
            split = i
        elif ch == "\\":
            i += 1
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
            if depth == 0:
                break
        elif ch == '"':
            i = _string_end(path, i)
        i += 1
    if depth > 0:
        return None
    inner = path[split:i] if split else ""
    qpath = (path[2:split] if split else path[2:i]).strip()
    op, value = _op_value(inner.strip())
    rest = path[i + 1 :]
    all_ = rest.startswith("#")
    if all_:
        rest = rest[1:]
    return _Query(qpath, op, value, all_, rest)


def _op_value(text: str) -> tuple[str, str]:
    if not text:
        return "", ""
    op = next((o for o in _OPS if text.startswith(o)), text[0])
    value = text[len(op) :].strip()
    if op == "==":
        op = "="
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        value = value[1:-1]
        if "\\" in value:
            value = _json_unescape(value)
    return op, value


def _json_unescape(text: str) -> str:
    try:
        result = orjson.loads(b'"' + text.encode() + b'"')
    except orjson.JSONDecodeError:
        return text
    return result if isinstance(result, str) else text


def _query(arr: list[Any], path: str) -> Any:
    query = _parse_query(path)
    if query is None:
        return MISSING
    rest = query.rest
    per_item, after = rest, None
    if rest.startswith("."):
        left, after = _split_pipe(rest[1:])
        per_item = "." + left if left else ""
    elif rest.startswith("|"):
        per_item, after = "", rest[1:]
    found = []
    for item in arr:
        if isinstance(item, (dict, list)):
            probe = get(item, query.path)
        elif query.path:
            continue
        else:
            probe = item
        if _matches(query, probe):
            value = _then(item, per_item)
            if not query.all:
                return value if after is None or value is MISSING else get(value, after)
            if value is not MISSING:
                found.append(value)
    if not query.all:
        return MISSING
    return found if after is None else get(found, after)


def _matches(query: _Query, value: Any) -> bool:
    """gjson's ``queryMatches``."""
    target = query.value
    if target.startswith("~"):
        converted = _TILDE.get(target[1:])
        if converted is None:
            return False
        value, target = converted(value), "true"
    if value is MISSING:
        return False
    if not query.op:
        return True
    if value is True or value is False:
        return _BOOL_OPS.get((value, query.op), lambda t: False)(target)
    if isinstance(value, str):
        return _compare(query.op, value, target)
    if isinstance(value, (int, float)):
        return query.op not in ("%", "!%") and _compare(query.op, float(value), _go_float(target))
    return False


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "=":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    if op == ">=":
        return bool(left >= right)
    if op == "%":
        return _wildcard(right).fullmatch(left) is not None
    if op == "!%":
        return _wildcard(right).fullmatch(left) is None
    return False


_BOOL_OPS: dict[tuple[bool, str], Callable[[str], bool]] = {
    (True, "="): lambda t: t == "true",
    (True, "!="): lambda t: t != "true",
    (True, ">"): lambda t: t == "false",
    (True, ">="): lambda t: True,
    (False, "="): lambda t: t == "false",
    (False, "!="): lambda t: t != "false",
    (False, "<"): lambda t: t == "true",
    (False, "<="): lambda t: True,
}

_GO_BOOL = {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}


def _truthy(value: Any) -> bool:
    if value is True:
        return True
    if isinstance(value, str):
        return _GO_BOOL.get(value.lower()) is True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0


def _falsy(value: Any) -> bool:
    if value is None or value is False:
        return True
    if isinstance(value, str):
        return _GO_BOOL.get(value.lower()) is False
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


_TILDE: dict[str, Callable[[Any], bool]] = {
    "*": lambda v: v is not MISSING,
    "null": lambda v: v is None or v is MISSING,
    "true": _truthy,
    "false": lambda v: v is MISSING or _falsy(v),
}

_GO_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE)


def _go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``, 0 when it does not parse (as gjson ignores the error)."""
    return float(text) if _GO_FLOAT.fullmatch(text) else 0.0


# --- modifiers, literals, multipaths ------------------------------------------------------------------------------


def _reverse(value: Any, arg: Any) -> Any:
    if isinstance(value, list):
        return value[::-1]
    if isinstance(value, dict):
        return dict(reversed(list(value.items())))
    return value


def _flatten(value: Any, arg: Any) -> Any:
    if not isinstance(value, list):
        return value
    deep = isinstance(arg, dict) and arg.get("deep") is True
    out: list[Any] = []
    for item in value:
        if isinstance(item, list):
            out.extend(_flatten(item, arg) if deep else item)
        else:
            out.append(item)
    return out


_MODIFIERS: dict[str, Callable[[Any, Any], Any]] = {
    "this": lambda v, a: v,
    "valid": lambda v, a: v,
    "ugly": lambda v, a: v,
    "pretty": lambda v, a: v,
    "reverse": _reverse,
    "flatten": _flatten,
    "keys": lambda v, a: list(v) if isinstance(v, dict) else [] if isinstance(v, list) else MISSING,
    "values": lambda v, a: list(v.values()) if isinstance(v, dict) else v if isinstance(v, list) else MISSING,
}


def _modifier(doc: Any, path: str) -> Any:
    """``@name[:arg]`` then the rest; ``None`` when ``name`` is no modifier (it is then a key)."""
    i = 1
    while i < len(path) and path[i] not in _MODIFIER_END:
        i += 1
    fn = _MODIFIERS.get(path[1:i])
    if fn is None:
        return None
    arg = None
    if i < len(path) and path[i] == ":":
        arg, i = _modifier_arg(path, i + 1)
    result = fn(doc, arg)
    return _then(result, path[i:])


def _modifier_arg(path: str, start: int) -> tuple[Any, int]:
    """A modifier's argument: a JSON value, else the text up to the next separator."""
    end = _json_end(path, start)
    if end is not None:
        return orjson.loads(path[start:end]), end
    i = start
    while i < len(path) and path[i] not in ".|":
        i += 1
    return path[start:i], i


def _json_end(text: str, start: int) -> int | None:
    """End of the JSON value at ``text[start:]`` (the longest prefix that parses), or ``None``."""
    if start >= len(text):
        return None
    ch = text[start]
    if ch in "[{":
        depth = 0
        i = start
        while i < len(text):
            c = text[i]
            if c == '"':
                i = _string_end(text, i)
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1 if _valid(text[start : i + 1]) else None
            i += 1
        return None
    if ch == '"':
        end = _string_end(text, start) + 1
        return end if _valid(text[start:end]) else None
    i = start
    while i < len(text) and text[i] not in ".|,]}":
        i += 1
    return i if i > start and _valid(text[start:i]) else None


def _valid(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _literal(path: str) -> Any:
    end = _json_end(path, 1)
    if end is None:
        return None
    return _then(orjson.loads(path[1:end]), path[end:])


def _multipath(doc: Any, path: str) -> Any:
    """``[p1,p2]`` → the list of the values that exist; ``{p1,"k":p2}`` → an object (gjson's sub-selectors)."""
    parsed = _parse_selectors(path)
    if parsed is None:
        return None
    selectors, rest = parsed
    if rest and rest[0] not in ".|":
        return None
    if path[0] == "[":
        result: Any = [v for v in (get(doc, sel) for _, sel in selectors) if v is not MISSING]
    else:
        result = {}
        for name, sel in selectors:
            value = get(doc, sel)
            if value is not MISSING:
                result[name if name is not None else _name_of_last(sel)] = value
    return _then(result, rest)


def _parse_selectors(path: str) -> tuple[list[tuple[str | None, str]], str] | None:
    close = "]" if path[0] == "[" else "}"
    depth = 0
    start = 1
    name: str | None = None
    out: list[tuple[str | None, str]] = []
    i = 1
    while i < len(path):
        ch = path[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            end = _string_end(path, i)
            if depth == 0 and i == start and path[end + 1 : end + 2] == ":":
                name = _json_unescape(path[i + 1 : end])
                start = end + 2
                i = start
                continue
            i = end
        elif ch in "([{":
            depth += 1
        elif ch in ")]}" and depth > 0:
            depth -= 1
        elif depth == 0 and ch in ("," + close):
            out.append((name, path[start:i]))
            name, start = None, i + 1
            if ch == close:
                return out, path[i + 1 :]
        i += 1
    return None


def _name_of_last(path: str) -> str:
    """The key a ``{...}`` multipath gives an unnamed selector: its last component if simple, else ``_``."""
    last = re.split(r"(?<!\\)[.|]", path)[-1]
    if last and re.fullmatch(r"[^\[\]{}()#@!*?\"\\:,=<>%~ ]+", last):
        return last
    return "_"
