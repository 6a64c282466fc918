"""Small helpers over plain Kubernetes object data, shared by every builder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..provenance import overriding


def filtered(values: Mapping[str, str] | None, disallowed: Sequence[str]) -> dict[str, str]:
    """``values`` without the keys KServe never propagates (the ConfigMap's disallowed lists)."""
    return {k: v for k, v in (values or {}).items() if k not in disallowed}


def _env(container: dict[str, Any]) -> list[dict[str, Any]]:
    env = container.get("env") or []  # absent or null: start a list
    container["env"] = env
    return env


def set_env(container: dict[str, Any], name: str, value: str) -> None:
    """``AddEnvVarToPodSpec``: overwrite the value if the variable exists, else append it."""
    env = _env(container)
    for entry in env:
        if entry.get("name") == name:
            entry["value"] = overriding(entry.get("value"), value)
            return
    env.append({"name": name, "value": value})


def add_env_if_absent(container: dict[str, Any], name: str, value: str) -> None:
    """``AppendEnvVarIfNotExists``: append unless a variable of that name is already there."""
    env = _env(container)
    if not any(e.get("name") == name for e in env):
        env.append({"name": name, "value": value})


def split_path(path: str) -> tuple[str | int, ...]:
    """``a.b[2].c`` → ``("a", "b", 2, "c")``; keys containing dots may be written ``labels[app.kubernetes.io/x]``."""
    out: list[str | int] = []
    token = ""
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == ".":
            if token:
                out.append(token)
            token = ""
        elif ch == "[":
            if token:
                out.append(token)
            token = ""
            end = path.find("]", i)
            if end < 0:  # a key that itself contains "[": keep the rest as one token
                token = path[i:]
                break
            inner = path[i + 1 : end]
            out.append(int(inner) if inner.isdigit() else inner)
            i = end
        else:
            token += ch
        i += 1
    if token:
        out.append(token)
    return tuple(out)
