"""What ``migrate`` prints: a unified diff per changed file (as ``kubectl diff`` and ``git diff`` show one), or the
RFC 6902 JSON patch of each changed object."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence

from . import FileMigration


def unified_diff(files: Sequence[FileMigration]) -> str:
    """``--- a/FILE`` / ``+++ b/FILE`` hunks for each changed file, in input order."""
    out: list[str] = []
    for fm in files:
        if not fm.changed:
            continue
        old = fm.old_text.splitlines(keepends=True)
        new = fm.new_text.splitlines(keepends=True)
        for line in difflib.unified_diff(old, new, f"a/{fm.file.lstrip('/')}", f"b/{fm.file.lstrip('/')}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def json_patches(files: Sequence[FileMigration]) -> str:
    """A JSON list: per changed object its file, document index, apiVersion/kind/namespace/name and ``patch``."""
    entries = [
        {
            "file": obj.file,
            "document": obj.index,
            "apiVersion": obj.before.get("apiVersion"),
            "kind": obj.kind,
            "namespace": obj.namespace,
            "name": obj.name,
            "patch": obj.json_patch(),
        }
        for fm in files
        for obj in fm.objects
    ]
    return json.dumps(entries, indent=2) + "\n"


def summary(files: Sequence[FileMigration]) -> str:
    """One line per changed object: ``FILE: Kind/ns/name: rule, rule``."""
    lines = []
    for fm in files:
        for obj in fm.objects:
            rules = sorted({c.rule for c in obj.changes})
            lines.append(f"{fm.file}: {obj.ref}: {len(obj.changes)} change(s) ({', '.join(rules)})\n")
    return "".join(lines)
