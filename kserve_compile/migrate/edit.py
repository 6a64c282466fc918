"""Edits the migrate rules make, on plain data or on a ruamel.yaml round-trip tree, recorded as they are made.

The rules run twice over every object: once over the plain data the project's parser reads (the truth: what the
migrated object must be) and once over the commented tree that becomes the new file text. :class:`Editor` hides the
difference: a new key goes where a person would write it (renames stay in place, inserts after a named key or at
the end), and full-line comments that followed the entry before an insert stay where they were in the text, below
the new entry, so an appended key never lands underneath a comment that closed the block.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Change:
    """One field the migration sets, adds or moves; ``path`` as the project writes field paths."""

    rule: str
    op: str  # "set" (a value replaced), "add" (a new key), "move" (a key renamed in place)
    path: str
    value: Any = None
    old: Any = None
    from_path: str = ""


def format_path(path: Path) -> str:
    """``("metadata", "annotations", "a.b/c")`` → ``metadata.annotations[a.b/c]`` (``kube.fields.split_path`` reads it back)."""
    out = ""
    for part in path:
        if isinstance(part, int) or any(ch in str(part) for ch in "./[]"):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class Editor:
    """Makes and records edits; ``roundtrip`` trees get ruamel containers and keep their comments in place."""

    roundtrip: bool
    changes: list[Change] = field(default_factory=list)

    def mapping(self, items: Sequence[tuple[str, Any]] = ()) -> MutableMapping[str, Any]:
        out: MutableMapping[str, Any] = CommentedMap() if self.roundtrip else {}
        for key, value in items:
            out[key] = self._styled(value)
        return out

    def _styled(self, value: Any) -> Any:
        """A new string that plain YAML would read as something else ("1", "true", "") is written double-quoted."""
        if self.roundtrip and isinstance(value, str) and not isinstance(value, DoubleQuotedScalarString):
            try:
                plain = yaml.safe_load(value)
            except yaml.YAMLError:
                plain = None
            if plain != value:
                return DoubleQuotedScalarString(value)
        return value

    def set(
        self, target: MutableMapping[str, Any], key: str, value: Any, path: Path, rule: str, after: str | None = None
    ) -> None:
        """Replace ``key``'s value where it stands, or add it after ``after`` (at the end when absent or None)."""
        value = self._styled(value)
        if key in target and target[key] is not None:
            old = target[key]
            target[key] = value
            self.changes.append(Change(rule, "set", format_path(path + (key,)), _plain(value), _plain(old)))
            return
        if key in target:  # an explicit null: KServe's nil pointer, replaced where it stands
            target[key] = value
        else:
            keys = list(target)
            index = keys.index(after) + 1 if after in keys else len(keys)
            self._insert(target, index, key, value)
        self.changes.append(Change(rule, "add", format_path(path + (key,)), _plain(value)))

    def ensure(self, target: MutableMapping[str, Any], key: str) -> MutableMapping[str, Any]:
        """An empty mapping at ``key`` (absent or null there) for a change inside it; the change itself is recorded."""
        child = self.mapping()
        if key in target:
            target[key] = child
        else:
            self._insert(target, len(target), key, child)
        return child

    def set_first(self, target: MutableMapping[str, Any], key: str, value: Any, path: Path, rule: str) -> None:
        """Add ``key`` as the first entry (``model.modelFormat`` leads the model, as KServe's type declares it)."""
        value = self._styled(value)
        self._insert(target, 0, key, value)
        self.changes.append(Change(rule, "add", format_path(path + (key,)), _plain(value)))

    def rename(self, target: MutableMapping[str, Any], old: str, new: str, path: Path, rule: str) -> None:
        """Move ``old``'s value to ``new`` at the same position, with the comments around it."""
        keys = list(target)
        index = keys.index(old)
        value = target.pop(old)
        if isinstance(target, CommentedMap):
            comments = target.ca.items.pop(old, None)
            target.insert(index, new, value)
            if comments is not None:
                target.ca.items[new] = comments
        else:
            _dict_insert(target, index, new, value)
        self.changes.append(Change(rule, "move", format_path(path + (new,)), from_path=format_path(path + (old,))))

    def _insert(self, target: MutableMapping[str, Any], index: int, key: str, value: Any) -> None:
        if not isinstance(target, CommentedMap):
            _dict_insert(target, index, key, value)
            return
        keys = list(target)
        trailing = _take_trailing(target, keys[index - 1]) if index > 0 else None
        target.insert(index, key, value)
        if trailing is not None:
            _attach_trailing(target, key, trailing)


def _dict_insert(target: MutableMapping[str, Any], index: int, key: str, value: Any) -> None:
    items = list(target.items())
    items.insert(index, (key, value))
    target.clear()
    target.update(items)


def _plain(value: Any) -> Any:
    """A JSON-able copy of a value (ruamel containers and scalar strings become plain ones)."""
    if isinstance(value, MutableMapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


# --- comments: the full-line comments after an entry belong to the text below it ----------------------------------


def _last_slot(node: Any, key: Any) -> tuple[Any, Any, int]:
    """The comment slot (container, key, index in its ``ca.items`` entry) that ends the entry ``node[key]``."""
    value = node[key]
    if isinstance(value, CommentedMap) and len(value):
        return _last_slot(value, list(value)[-1])
    if isinstance(value, CommentedSeq) and len(value):
        return _last_slot(value, len(value) - 1)
    return (node, key, 2 if isinstance(node, CommentedMap) else 0)


def _take_trailing(node: Any, key: Any) -> Any:
    """Detach the full-line comments after ``node[key]`` (its end-of-line comment stays); None when there are none."""
    owner, slot_key, index = _last_slot(node, key)
    entry = owner.ca.items.get(slot_key)
    token = entry[index] if entry and len(entry) > index else None
    if token is None or "\n" not in token.value.rstrip("\n"):
        return None
    first, rest = token.value.split("\n", 1)
    moved = copy.copy(token)
    moved.value = "\n" + rest
    if first.strip():
        token.value = first + "\n"
    else:
        entry[index] = None
    return moved


def _attach_trailing(node: Any, key: Any, token: Any) -> None:
    owner, slot_key, index = _last_slot(node, key)
    entry = owner.ca.items.setdefault(
        slot_key, [None, None, None, None] if isinstance(owner, CommentedMap) else [None, None]
    )
    existing = entry[index]
    if existing is not None:  # keep the new entry's own end-of-line comment, then the moved lines
        token = copy.copy(token)
        token.value = existing.value.rstrip("\n") + token.value
    entry[index] = token
