"""A py-spy profile of a running server: where its CPU goes while wrk drives it.

py-spy lives in its own virtualenv under ``.bench/`` (created on first use), so the project does not
depend on it. Samples are of active threads only (idle waits are not counted); time inside a C
extension (orjson, ONNX Runtime, uvloop) is charged to the Python function that called it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

_LINE = re.compile(r" \(([^()]*?)(?::\d+)?\)$")


def ensure_py_spy(bench_dir: Path) -> Path:
    venv = bench_dir / "tools-venv"
    exe = venv / "bin" / "py-spy"
    if not exe.exists():
        print("creating", venv, "with py-spy ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "py-spy"], check=True)
    return exe


def record(py_spy: Path, pid: int, seconds: int, out: Path, cpu: int | None) -> subprocess.Popen:
    """Start sampling ``pid`` for ``seconds`` (returns at once; wait on the process)."""
    command = [
        str(py_spy),
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(seconds),
        "--rate",
        "250",
        "--format",
        "raw",
        "--output",
        str(out),
        "--nonblocking",
    ]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _frame(frame: str, root: Path) -> str:
    """``fn (path/to/file.py:12)`` -> ``fn (file.py)`` with project paths relative to the repository."""
    match = _LINE.search(frame)
    if not match:
        return frame
    path = match.group(1)
    name = frame[: match.start()]
    short = path
    if path.startswith(str(root) + "/"):
        short = path[len(str(root)) + 1 :]
    elif "site-packages/" in path:
        short = path.split("site-packages/", 1)[1]
    elif "/lib/python" in path:
        short = "stdlib/" + path.rsplit("/", 1)[1]
    return f"{name} ({short})"


def summarize(raw: Path, root: Path, top: int = 14) -> str:
    """Top functions by self samples and by inclusive samples, as text."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame(f, root) for f in stack.split(";")[1:]]  # the first entry names the thread
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return "  (no samples)"
    lines = [f"  {total} samples of active threads"]
    lines.append("  self %   function (where: time in C code called from it included)")
    for frame, count in own.most_common(top):
        lines.append(f"  {100 * count / total:5.1f}   {frame}")
    lines.append("  total %  function (with its callees)")
    for frame, count in inclusive.most_common(top):
        lines.append(f"  {100 * count / total:5.1f}   {frame}")
    return "\n".join(lines)
