"""explain's cost: explain of 1,000 isvcs against render of the same, and render against render without provenance.

    python bench/explain_bench.py [--count 1000] [--rounds 5] [--baseline-rev REV]

Targets (issue 16): explain ≤ 3× render (same inputs, same invocation); render with provenance's hooks within 10% of
render without them — the baseline is the commit before provenance landed (``--baseline-rev``), checked out into a
temporary git worktree and timed in a subprocess over the same YAML file, interleaved round by round with ours.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import yaml  # noqa: E402
from workload import isvcs  # noqa: E402

BASELINE_REV = "882bbb3"  # the last commit before provenance: render without any tracing hook

# In a checkout (argv[1]): one warm-up, then one timed in-process run over the file argv[2] — render (parse →
# compile → YAML) or explain (the same with tracing, → YAML with an origin per line).
TIMER = """
import sys, time
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "render":
    from kserve_compile.api import render_files
    from kserve_compile.emit import dump_yaml
    run = lambda: dump_yaml(render_files([sys.argv[2]]))
else:
    from kserve_compile.api import CompileOptions, render_result
    from kserve_compile.emit.explain import annotated_yaml

    run = lambda: annotated_yaml(render_result([sys.argv[2]], options=CompileOptions(trace=True)).objects)
run()
t = time.perf_counter(); run(); print(time.perf_counter() - t)
"""


def _timed(checkout: Path, path: str, what: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", TIMER, str(checkout), path, what],
        check=True,
        capture_output=True,
        text=True,
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
    )
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "isvcs.yaml")
        Path(path).write_text(yaml.safe_dump_all(isvcs(args.count)), "utf-8")
        baseline = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(baseline), args.baseline_rev], check=True
        )
        try:
            ours, theirs, explained = [], [], []
            for _ in range(args.rounds):  # interleaved, so machine noise hits all three alike
                ours.append(_timed(ROOT, path, "render"))
                theirs.append(_timed(baseline, path, "render"))
                explained.append(_timed(ROOT, path, "explain"))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=False)
    render, before, explain = (statistics.median(x) for x in (ours, theirs, explained))
    ratio_render = statistics.median(o / t for o, t in zip(ours, theirs))
    ratio_explain = statistics.median(e / o for e, o in zip(explained, ours))
    print(
        f"workload: {args.count} InferenceServices; medians of {args.rounds} rounds; python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    print(f"render (this checkout, provenance hooks off)        {render:8.3f} s")
    print(f"baseline: render at {args.baseline_rev} (before provenance)  {before:8.3f} s")
    print(f"explain (tracing on, YAML with an origin per line)  {explain:8.3f} s")
    print("ratios are medians of per-round ratios")
    print(f"render ÷ baseline:  {ratio_render:.2f}×  (target ≤ 1.10×)  {'MET' if ratio_render <= 1.10 else 'NOT MET'}")
    print(f"explain ÷ render:   {ratio_explain:.2f}×  (target ≤ 3×)     {'MET' if ratio_explain <= 3 else 'NOT MET'}")


if __name__ == "__main__":
    main()
