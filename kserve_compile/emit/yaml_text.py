r"""Block-style YAML that kubectl (YAML 1.1) and YAML 1.2 readers load back unchanged.

Choices (kubectl-compatible):

* A multi-document stream in which **every** document, the first included, starts with a ``---``
  line, so outputs concatenate safely (as ``helm template`` output does); no objects give "".
* Mapping keys sorted, lists in their order; 2-space indent; a sequence under a key is not
  indented (``key:\n- item``, as kubectl writes it); ``{}``/``[]`` for empty collections; no line
  is ever folded.
* A string is written plain only when no YAML 1.1 reader (kubectl's go-yaml v2, PyYAML) or
  YAML 1.2 reader (ruamel, kyaml) could read it as anything else; otherwise it is double-quoted
  with JSON escapes (plus ``\uXXXX`` for characters YAML 1.1 treats as line breaks). A
  multi-line string is a literal block (``|``/``|-``) when that reads back exactly, else quoted.

The emitter walks plain dicts and lists directly and renders each distinct string once per call
(a cache), which is what makes it faster than libyaml for the objects we produce.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from json.encoder import (
    encode_basestring,  # C: '"' + JSON-escaped text + '"', non-ASCII kept
)

from kserve_compile.emit.order import check_tree, object_ref
from kserve_compile.gcpause import gc_paused

try:
    from kserve_compile.emit import _yaml_c  # the structural walk in C: optional, same bytes
except ImportError:  # built without a compiler: the Python walk alone
    _yaml_c = None  # type: ignore[assignment]

# Characters a YAML 1.1 reader treats as line breaks or rejects, plus DEL/C1 controls, BOM and
# surrogates: always escaped, never written raw.
_NASTY_CHARS = "\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff"
_NASTY = re.compile(f"[{_NASTY_CHARS}]")
# ASCII-only, starting with a character that is no YAML indicator (a '-' only before a letter,
# '_' or '-'); the remaining hazards (': ', ' #', trailing ':' or space, '---'/'...') are checked
# separately. Anything non-ASCII is quoted.
_PLAIN_SYNTAX = re.compile(r"(?:[A-Za-z0-9_./$(+]|-[A-Za-z_-])[ -~]*\Z")
# Starts like a number, date, time, .inf/.nan, [+-]inf, or a sign and '_' (ruamel's 1.2 int
# pattern [-+]?[0-9_]+ takes "-_" for a number): quoted, except Kubernetes quantities and
# durations such as 500m, 2Gi, 1.5Gi, 30s (no resolver reads digits followed by letters only;
# a leading "0" + letter (0x1F, 0o17, 0b1) is excluded).
_NUMBERISH = re.compile(r"[-+]?(?:[.0-9]|inf|nan)|[-+]_", re.IGNORECASE)
_QUANTITY = re.compile(r"(?:[1-9][0-9]*(?:\.[0-9]+)?|0\.[0-9]+)[A-Za-z]+\Z")
# Bool, null and special-float words of YAML 1.1 (incl. y/n) and 1.2, compared lower-cased.
_WORDS = frozenset("y n yes no on off true false null ~ nan inf infinity".split())
# A literal block scalar is used only when it reads back exactly: starts with a visible
# character, no tabs/controls, no trailing spaces on any line, at most one final newline.
_LITERAL_SYNTAX = re.compile(f"[^\\s\\x00-\\x1f{_NASTY_CHARS}][^\\x00-\\x09\\x0b-\\x1f{_NASTY_CHARS}]*\\Z")
_ASCII_NOT_IN_LITERAL = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F])  # _LITERAL_SYNTAX's refusals, ASCII part
_LITERAL = object()  # cache marker: "write as a literal block"
_MAX_SIMPLE_KEY = 1000  # YAML readers refuse implicit keys over 1024 characters (bytes, in some)


def _escape_nasty(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _quoted(s: str) -> str:
    q = encode_basestring(s)
    return _NASTY.sub(_escape_nasty, q) if _NASTY.search(q) else q


def _is_plain(s: str) -> bool:
    if not _PLAIN_SYNTAX.match(s):
        return False
    if ": " in s or " #" in s or s[-1] in " :" or s.startswith(("---", "...")):
        return False
    if s.lower() in _WORDS:
        return False
    return not _NUMBERISH.match(s) or bool(_QUANTITY.match(s))


def _scalar(s: str, cache: dict) -> object:
    """Rendered form of a string value (or :data:`_LITERAL`), remembered per distinct string."""
    if _is_plain(s):
        out: object = s
    elif _is_literal(s):
        out = _LITERAL
    else:
        out = _quoted(s)
    cache[s] = out
    return out


def _is_literal(s: str) -> bool:
    if "\n" not in s or " \n" in s or s.endswith((" ", "\n\n")):
        return False
    if s.isascii():  # the common case (scripts, config files), checked with C loops instead of the regex's
        raw = s.encode("ascii")
        return 0x20 < raw[0] < 0x7F and len(raw.translate(None, _ASCII_NOT_IN_LITERAL)) == len(raw)
    return bool(_LITERAL_SYNTAX.match(s))


def scalar_line_count(v: object) -> int:
    """How many lines the emitter writes for a scalar value: a literal block adds one per line of text."""
    if not isinstance(v, str) or "\n" not in v:
        return 1
    s = str.__str__(v)
    if _is_plain(s) or not _is_literal(s):
        return 1
    return 1 + (s[:-1] if s.endswith("\n") else s).count("\n") + 1


def key_line_count(k: object) -> int:
    """Lines a mapping key takes before its value: 2 for an explicit ``? key`` (over 1,000 bytes)."""
    if isinstance(k, str) and len(k) <= 200:
        return 1
    return 2 if _key(k, {}).startswith("?") else 1


def _key(k: object, cache: dict) -> str:
    if type(k) is not str:
        if not isinstance(k, str):
            raise _Bad(k, "mapping key is not a string")
        k = str.__str__(k)
    out = k if _is_plain(k) else _quoted(k)
    if len(out) > 200 and len(out.encode("utf-8", "surrogatepass")) > _MAX_SIMPLE_KEY:
        out = "? " + out + "\n"  # explicit key; the value line then starts with ':'
    cache[k] = out
    return out


def _literal(s: str, indent: str, cache: dict) -> str:
    """A literal block at ``indent``, remembered per (text, indent): LLM presets repeat long scripts verbatim.

    Every line gets ``indent`` but an empty one, which stays empty; no line of a literal ends in a space (see
    :func:`_is_literal`), so an ``indent`` just before a line break can only be an empty line's."""
    key = (s, indent)
    out = cache.get(key)
    if out is None:
        head, body = ("|\n", s[:-1]) if s.endswith("\n") else ("|-\n", s)
        text = indent + body.replace("\n", "\n" + indent) + "\n"
        out = cache[key] = head + text.replace(indent + "\n", "\n")
    return out


def _float(v: float) -> str:
    if not math.isfinite(v):
        raise _Bad(v, "not a finite number")
    r = repr(v)
    if "e" in r:  # YAML 1.1 wants a '.' in the mantissa and a signed exponent: 1.0e-05
        mantissa, exponent = r.split("e")
        r = (mantissa if "." in mantissa else mantissa + ".0") + "e" + exponent
    return r


class _Bad(Exception):
    def __init__(self, value: object, why: str) -> None:
        super().__init__(why)
        self.value, self.why = value, why


def _value(v: object, indent: str, cache: dict) -> str:
    """Inline form of a non-string scalar, or of an empty collection (slow path, subclasses)."""
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if type(v) is float:
        return _float(v)
    if isinstance(v, str):  # str subclass (e.g. a str Enum): its text, not its str()
        s = str.__str__(v)
        r = cache.get(s) or _scalar(s, cache)
        return _literal(s, indent, cache)[:-1] if r is _LITERAL else r  # type: ignore[return-value]
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return _float(float(v))
    raise _Bad(v, f"cannot write a value of type {t.__name__}")


def _prefix(k: object, indent: str, kc: dict, pk: dict) -> str:
    """``indent`` + the rendered key + ``:`` (an explicit long key takes a line of its own), remembered per indent."""
    ks = kc.get(k) or _key(k, kc)
    out = f"{indent}{ks}{indent}:" if ks[0] == "?" else f"{indent}{ks}:"
    pk[k] = out
    return out


def _mapping(d: Mapping, indent: str, out: list[str], vc: dict, kc: dict, pc: dict) -> None:
    """Emit the entries of a non-empty mapping, every line at ``indent`` (a sequence item swaps the first for "- ")."""
    app = out.append
    inner = indent + "  "
    pk = pc.get(indent)
    if pk is None:
        pk = pc[indent] = {}
    for k in sorted(d) if len(d) > 1 else d:
        v = d[k]
        p = pk.get(k) or _prefix(k, indent, kc, pk)
        t = type(v)
        if t is str:
            s = vc.get(v) or _scalar(v, vc)
            if s is _LITERAL:
                app(f"{p} {_literal(v, inner, vc)}")
            else:
                app(f"{p} {s}\n")
        elif t is dict or t is list:
            if not v:
                app(p + (" {}\n" if t is dict else " []\n"))
            elif t is dict:
                app(p + "\n")
                _mapping(v, inner, out, vc, kc, pc)
            else:
                app(p + "\n")
                _sequence(v, indent, out, vc, kc, pc)
        elif t is int:
            app(f"{p} {v}\n")
        elif t is bool or t is float or v is None:
            app(f"{p} {_value(v, inner, vc)}\n")
        elif isinstance(v, Mapping) and v:
            app(p + "\n")
            _mapping(v, inner, out, vc, kc, pc)
        elif isinstance(v, (list, tuple)) and v:
            app(p + "\n")
            _sequence(v, indent, out, vc, kc, pc)
        elif isinstance(v, Mapping):
            app(p + " {}\n")
        elif isinstance(v, (list, tuple)):
            app(p + " []\n")
        else:
            app(f"{p} {_value(v, inner, vc)}\n")


def _sequence(items: list | tuple, indent: str, out: list[str], vc: dict, kc: dict, pc: dict) -> None:
    app = out.append
    dash = indent + "- "
    inner = indent + "  "
    cut = len(inner)
    for v in items:
        t = type(v)
        if t is str:
            s = vc.get(v) or _scalar(v, vc)
            app(f"{dash}{_literal(v, inner, vc)}" if s is _LITERAL else f"{dash}{s}\n")
        elif (t is dict or t is list or isinstance(v, (Mapping, list, tuple))) and v:
            # A mapping or a nested sequence starts on the dash line: "- a: 1", "- - a".
            start = len(out)
            if t is dict or isinstance(v, Mapping):
                _mapping(v, inner, out, vc, kc, pc)
            else:
                _sequence(v, inner, out, vc, kc, pc)
            out[start] = dash + out[start][cut:]
        elif t is dict or isinstance(v, Mapping):
            app(dash + "{}\n")
        elif isinstance(v, (list, tuple)):
            app(dash + "[]\n")
        else:
            app(f"{dash}{_value(v, inner, vc)}\n")


def _document(obj: Mapping, out: list[str], vc: dict, kc: dict, pc: dict) -> None:
    if not isinstance(obj, Mapping):
        raise _Bad(obj, f"a document must be a mapping, not {type(obj).__name__}")
    if obj:
        _mapping(obj, "", out, vc, kc, pc)
    else:
        out.append("{}\n")


@gc_paused
def dump_yaml(objs: Iterable[dict]) -> str:
    """A multi-document YAML stream: each object as one document preceded by ``---``.

    The walk runs in C (``_yaml_c``, built with the package where a compiler is found) when every value is plain
    JSON-shaped data; anything else, an error included, is written (or reported) by :func:`dump_yaml_python`."""
    if _yaml_c is not None:
        docs = objs if type(objs) is list else list(objs)
        try:
            return _yaml_c.dump(docs, {}, {}, {}, _scalar, _literal, _prefix, _value, _LITERAL)
        except Exception:  # noqa: BLE001 - Unsupported, or a bad value: the Python walk decides and says where
            return dump_yaml_python(docs)
    return dump_yaml_python(objs)


def dump_yaml_python(objs: Iterable[dict]) -> str:
    """:func:`dump_yaml`, written by the Python walk alone (the reference the C walk is tested against)."""
    out: list[str] = []
    vc: dict = {}  # string value -> rendered form (or _LITERAL)
    kc: dict = {}  # mapping key -> rendered form
    pc: dict = {}  # indent -> {mapping key -> line prefix}
    for obj in objs:
        out.append("---\n")
        try:
            _document(obj, out, vc, kc, pc)
        except (_Bad, TypeError, RecursionError) as exc:
            raise _located(obj, exc) from None
    return "".join(out)


def yaml_document(obj: Mapping) -> str:
    """One mapping as YAML without a ``---`` line (used for kustomization.yaml)."""
    out: list[str] = []
    try:
        _document(obj, out, {}, {}, {})
    except (_Bad, TypeError, RecursionError) as exc:
        raise _located(obj, exc) from None
    return "".join(out)


def _located(obj: object, exc: BaseException) -> Exception:
    """Turn an emitter failure into an error naming the object and the field path."""
    ref = object_ref(obj)
    try:
        check_tree(obj, ref)
    except (TypeError, ValueError) as located:
        return located
    except RecursionError:
        return ValueError(f"{ref}: nested too deeply (or contains itself)")
    why = exc.why if isinstance(exc, _Bad) else str(exc)
    return TypeError(f"{ref}: {why}")
