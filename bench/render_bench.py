"""Render benchmark (issues 7 and 10): 1,000 generated InferenceServices, in-process and through the CLI, against
baselines measured in the same run — the libyaml emission floor (PyYAML CSafeDumper over the same objects) and
`kubectl kustomize` over the same rendered objects — and 10,000 of them, for linearity and peak memory.

    python bench/render_bench.py [--count 1000] [--rounds 5] [--large 10000]

Targets (issue 10): 1,000 isvcs → YAML in ≤ 0.5 s in-process; the CLI over 1,000 isvcs, process start to exit,
≤ 1.0× the libyaml floor for the same objects; 10,000 isvcs in ≤ 11× the time of 1,000 (each in a fresh process of
its own, peak RSS reported); `render` of one isvc ≤ 0.2 s wall from process start. Figures are medians; machines
here are small and shared, so ratios are the figures to trust.

LLM workload (issue 13, bench/llm_workload.py: single node with router, prefill/decode, multi-node data parallel):
1,000 LLMInferenceServices → YAML within 2× the InferenceService figure measured in the same run, and `render` of
one LLMInferenceService within the one-isvc CLI budget (and next to the one-isvc figure of the same run).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from llm_workload import llmisvcs  # noqa: E402
from workload import isvcs  # noqa: E402

from kserve_compile.api import render_objects  # noqa: E402
from kserve_compile.driver import compile as compile_documents  # noqa: E402
from kserve_compile.emit import dump_yaml
from kserve_compile.emit.outdir import write_output_dir  # noqa: E402
from kserve_compile.emit.yaml_text import _yaml_c, dump_yaml_python  # noqa: E402
from kserve_compile.inputs.parse import parse_text  # noqa: E402


def run_times(fn, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def median_time(fn, rounds: int) -> float:
    return statistics.median(run_times(fn, rounds))


@dataclass
class Paired:
    first: float  # median seconds
    second: float
    ratio: float  # median of the per-round ratios first / second


def paired(first, second, rounds: int) -> Paired:
    """Two workloads timed alternately, round by round."""
    a, b = [], []
    for _ in range(rounds):
        a.append(median_time(first, 1))
        b.append(median_time(second, 1))
    return Paired(statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b)))


def scale_run(count: int, rounds: int) -> None:
    """In this (fresh) process: manifests → YAML for ``count`` isvcs; prints seconds (median) and peak RSS as JSON."""
    dump_yaml(render_objects(isvcs(10)))  # imports and first-use caches, as in any longer run
    manifests = isvcs(count)
    secs = median_time(lambda: dump_yaml(render_objects(manifests)), rounds)
    print(json.dumps({"seconds": secs, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def scale_pair(small: int, large: int) -> tuple[dict, dict]:
    """The same measurement for ``small`` and ``large`` isvcs, each in a fresh process and a single round (so both
    pay for first-touch memory alike): small, large, small — the small figure is the mean of the two around the
    large one, which evens out a change of load."""
    out = []
    for count, rounds in ((small, 1), (large, 1), (small, 1)):
        cmd = [sys.executable, __file__, "--scale-child", str(count), "--rounds", str(rounds)]
        out.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
    before, big, after = out
    small_run = {
        "seconds": (before["seconds"] + after["seconds"]) / 2,
        "peak_rss_mb": max(before["peak_rss_mb"], after["peak_rss_mb"]),
    }
    return small_run, big


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--kustomize-isvcs", type=int, default=250, help="isvcs whose objects kubectl kustomize rebuilds (0: skip it)"
    )
    ap.add_argument("--large", type=int, default=10_000, help="isvcs of the linearity run (0: skip it)")
    ap.add_argument("--scale-child", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scale_child:
        scale_run(args.scale_child, args.rounds)
        return

    manifests = isvcs(args.count)
    source = dump_yaml(manifests)
    objects = render_objects(manifests)
    print(
        f"workload: {args.count} InferenceServices → {len(objects)} objects, {len(dump_yaml(objects)) / 1e6:.1f} MB of YAML"
    )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; medians of {args.rounds} rounds")
    print(f"C walks (emitter, deep copy): {'built' if _yaml_c is not None else 'not built: Python walks only'}\n")

    # the render and the libyaml floor alternate round by round, so that a neighbour's burst of load hits both alike
    render_vs_floor = paired(
        lambda: dump_yaml(render_objects(manifests)),
        lambda: yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=True),
        args.rounds,
    )
    t_render, t_floor = render_vs_floor.first, render_vs_floor.second
    t_parse_render = median_time(
        lambda: dump_yaml(compile_documents(parse_text(source, "bench.yaml")).objects), args.rounds
    )
    t_compile_only = median_time(lambda: render_objects(manifests), args.rounds)
    t_emit = median_time(lambda: dump_yaml(objects), args.rounds)
    t_emit_python = median_time(lambda: dump_yaml_python(objects), args.rounds)
    llm_manifests = llmisvcs(args.count)
    llm_objects = render_objects(llm_manifests)
    # LLM and InferenceService rounds alternate, so that a neighbour's load hits both alike; the ratio is the median
    # of the per-round ratios
    llm_vs_isvc = paired(
        lambda: dump_yaml(render_objects(llm_manifests)), lambda: dump_yaml(render_objects(manifests)), args.rounds
    )
    t_llm = llm_vs_isvc.first
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    rows = [
        ("in-process: manifests → objects → YAML", t_render),
        ("in-process: YAML text → parse → objects → YAML", t_parse_render),
        ("  of which compile (objects only)", t_compile_only),
        ("  of which our emitter (same objects)", t_emit),
        ("  our emitter with its Python walk only (same objects)", t_emit_python),
        ("baseline: PyYAML CSafeDumper, same objects (libyaml floor)", t_floor),
        (f"LLM: {args.count} LLMInferenceServices ({len(llm_objects)} objects) → YAML, in-process", t_llm),
    ]

    # A pip install byte-compiles the package; an editable checkout (or PYTHONDONTWRITEBYTECODE=1) may not have
    # .pyc files yet, and recompiling ~50 modules would add ~40 ms to every CLI start. Measure the installed case.
    compileall.compile_dir(str(ROOT / "kserve_compile"), quiet=1)
    compileall.compile_file(str(ROOT / "cli.py"), quiet=1)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "isvcs.yaml"
        path.write_text(source)
        one = Path(tmp) / "one.yaml"
        one.write_text(dump_yaml(manifests[:1]))
        cli = [sys.executable, str(ROOT / "cli.py"), "render"]
        # the CLI and the floor alternate, so that the neighbours' load on a shared machine hits both alike
        cli_vs_floor = paired(
            lambda: subprocess.run(cli + [str(path)], check=True, capture_output=True),
            lambda: yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=True),
            max(3, args.rounds),
        )
        t_cli = cli_vs_floor.first
        one_times = run_times(
            lambda: subprocess.run(cli + [str(one)], check=True, capture_output=True), max(10, 2 * args.rounds)
        )
        t_one = statistics.median(one_times)
        one_llm = Path(tmp) / "one-llm.yaml"
        one_llm.write_text(dump_yaml(llm_manifests[:1]))
        t_one_llm = median_time(
            lambda: subprocess.run(cli + [str(one_llm)], check=True, capture_output=True), max(10, 2 * args.rounds)
        )
        t_python = median_time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.rounds)
        rows += [
            (f"CLI: kserve-compile render of {args.count} isvcs (process start to exit)", t_cli),
            ("  libyaml floor, timed alternately with that CLI run", cli_vs_floor.second),
            ("CLI: kserve-compile render of 1 isvc (process start to exit)", t_one),
            ("CLI: kserve-compile render of 1 LLMInferenceService (process start to exit)", t_one_llm),
            ("  python -c pass (interpreter start, for scale)", t_python),
        ]
        t_kustomize = None
        if shutil.which("kubectl") and args.kustomize_isvcs > 0:
            subset = render_objects(manifests[: args.kustomize_isvcs])
            outdir = Path(tmp) / "out"
            write_output_dir(subset, outdir)
            t_kustomize = median_time(
                lambda: subprocess.run(["kubectl", "kustomize", str(outdir)], check=True, capture_output=True), 3
            )
            t_ours_subset = median_time(
                lambda: dump_yaml(render_objects(manifests[: args.kustomize_isvcs])), args.rounds
            )
            rows += [
                (
                    f"baseline: kubectl kustomize over the rendered objects of {args.kustomize_isvcs} isvcs ({len(subset)} objects)",
                    t_kustomize,
                ),
                (f"  ours, render + emit of the same {args.kustomize_isvcs} isvcs", t_ours_subset),
            ]

    small = large = None
    if args.large:
        small, large = scale_pair(args.count, args.large)
        rows += [
            (f"fresh process: {args.count} isvcs, manifests → YAML", small["seconds"]),
            (f"fresh process: {args.large} isvcs, manifests → YAML", large["seconds"]),
        ]

    width = max(len(r[0]) for r in rows)
    for label, secs in rows:
        print(f"{label:<{width}}  {secs:8.3f} s")
    print(f"\nisvcs/s in-process (manifests → YAML): {args.count / t_render:,.0f}")
    print(f"peak RSS of this process: {peak_mb:.0f} MB")
    if large is not None:
        print(
            f"peak RSS of the {args.count}-isvc process: {small['peak_rss_mb']:.0f} MB; of the {args.large}-isvc process: {large['peak_rss_mb']:.0f} MB"
        )
    print("\nratios and targets:")
    print(f"  in-process render to YAML: {t_render:.3f} s  (target ≤ 0.5 s)  {met(t_render <= 0.5)}")
    print(f"  in-process / libyaml floor (alternating rounds): {render_vs_floor.ratio:.2f}×")
    ratio = cli_vs_floor.ratio
    print(
        f"  CLI over {args.count} isvcs / libyaml floor (alternating runs): {ratio:.2f}×  (target ≤ 1.0×)  {met(ratio <= 1.0)}"
    )
    print(f"  our emitter / libyaml floor (emission alone): {t_emit / t_floor:.2f}×")
    print(f"  our emitter, C walk / Python walk: {t_emit / t_emit_python:.2f}×")
    if small is not None and large is not None:
        scale = large["seconds"] / small["seconds"]
        bound = 1.1 * args.large / args.count
        print(
            f"  {args.large} isvcs / {args.count} isvcs (fresh processes): {scale:.2f}×  (target ≤ {bound:.0f}×: linear)  {met(scale <= bound)}"
        )
    print(
        f"  one-isvc CLI wall: {t_one:.3f} s, median of {len(one_times)} (fastest {min(one_times):.3f} s)  "
        f"(target ≤ 0.2 s)  {met(t_one <= 0.2)}"
    )
    if t_kustomize:
        print(f"  kubectl kustomize / ours (same objects): {t_kustomize / t_ours_subset:.1f}×")
    print(
        f"  LLM / InferenceService, {args.count} each → YAML in-process (alternating rounds): "
        f"{llm_vs_isvc.ratio:.2f}×  (target ≤ 2×)  {met(llm_vs_isvc.ratio <= 2)}"
    )
    print(
        f"  one-LLMInferenceService CLI wall: {t_one_llm:.3f} s, {t_one_llm / t_one:.2f}× the one-isvc figure  "
        f"(target ≤ the one-isvc budget, 0.2 s)  {met(t_one_llm <= 0.2)}"
    )


def met(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


if __name__ == "__main__":
    main()
