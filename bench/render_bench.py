"""Render benchmark (issue 7): 1,000 generated InferenceServices, in-process and through the CLI, against baselines
measured in the same run — the libyaml emission floor (PyYAML CSafeDumper over the same objects) and
`kubectl kustomize` over the same rendered objects.

    python bench/render_bench.py [--count 1000] [--rounds 5]

Targets: 1,000 isvcs → YAML in ≤ 1.0 s in-process and ≤ 1.5× the libyaml floor; `render` of one isvc ≤ 0.25 s wall
from process start. Figures are medians; machines here are small and shared, so ratios are the figures to trust.

LLM workload (issue 13, bench/llm_workload.py: single node with router, prefill/decode, multi-node data parallel):
1,000 LLMInferenceServices → YAML within 2× the InferenceService figure measured in the same run, and `render` of
one LLMInferenceService within the one-isvc CLI budget (and next to the one-isvc figure of the same run).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from llm_workload import llmisvcs  # noqa: E402
from workload import isvcs  # noqa: E402

from kserve_compile.api import render_objects  # noqa: E402
from kserve_compile.emit import dump_yaml, write_output_dir  # noqa: E402
from kserve_compile.parse import parse_text  # noqa: E402
from kserve_compile.pipeline import compile_documents  # noqa: E402


def median_time(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kustomize-isvcs", type=int, default=250, help="isvcs whose objects kubectl kustomize rebuilds")
    args = ap.parse_args()

    manifests = isvcs(args.count)
    source = dump_yaml(manifests)
    objects = render_objects(manifests)
    print(f"workload: {args.count} InferenceServices → {len(objects)} objects, {len(dump_yaml(objects)) / 1e6:.1f} MB of YAML")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; medians of {args.rounds} rounds\n")

    t_render = median_time(lambda: dump_yaml(render_objects(manifests)), args.rounds)
    t_parse_render = median_time(lambda: dump_yaml(compile_documents(parse_text(source, "bench.yaml")).objects), args.rounds)
    t_compile_only = median_time(lambda: render_objects(manifests), args.rounds)
    t_emit = median_time(lambda: dump_yaml(objects), args.rounds)
    t_floor = median_time(lambda: yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=True), args.rounds)
    llm_manifests = llmisvcs(args.count)
    llm_objects = render_objects(llm_manifests)
    t_llm = median_time(lambda: dump_yaml(render_objects(llm_manifests)), args.rounds)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    rows = [
        ("in-process: manifests → objects → YAML", t_render),
        ("in-process: YAML text → parse → objects → YAML", t_parse_render),
        ("  of which compile (objects only)", t_compile_only),
        ("  of which our emitter (same objects)", t_emit),
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
        t_cli = median_time(lambda: subprocess.run(cli + [str(path)], check=True, capture_output=True), max(3, args.rounds // 2))
        t_one = median_time(lambda: subprocess.run(cli + [str(one)], check=True, capture_output=True), args.rounds)
        one_llm = Path(tmp) / "one-llm.yaml"
        one_llm.write_text(dump_yaml(llm_manifests[:1]))
        t_one_llm = median_time(lambda: subprocess.run(cli + [str(one_llm)], check=True, capture_output=True), args.rounds)
        t_python = median_time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.rounds)
        rows += [
            (f"CLI: kserve-compile render of {args.count} isvcs (process start to exit)", t_cli),
            ("CLI: kserve-compile render of 1 isvc (process start to exit)", t_one),
            ("CLI: kserve-compile render of 1 LLMInferenceService (process start to exit)", t_one_llm),
            ("  python -c pass (interpreter start, for scale)", t_python),
        ]
        t_kustomize = None
        if shutil.which("kubectl"):
            subset = render_objects(manifests[: args.kustomize_isvcs])
            outdir = Path(tmp) / "out"
            write_output_dir(subset, outdir)
            t_kustomize = median_time(lambda: subprocess.run(["kubectl", "kustomize", str(outdir)], check=True, capture_output=True), 3)
            t_ours_subset = median_time(lambda: dump_yaml(render_objects(manifests[: args.kustomize_isvcs])), args.rounds)
            rows += [
                (f"baseline: kubectl kustomize over the rendered objects of {args.kustomize_isvcs} isvcs ({len(subset)} objects)", t_kustomize),
                (f"  ours, render + emit of the same {args.kustomize_isvcs} isvcs", t_ours_subset),
            ]

    width = max(len(r[0]) for r in rows)
    for label, secs in rows:
        print(f"{label:<{width}}  {secs:8.3f} s")
    print(f"\nisvcs/s in-process (manifests → YAML): {args.count / t_render:,.0f}")
    print(f"peak RSS of this process: {peak_mb:.0f} MB")
    print("\nratios and targets:")
    print(f"  in-process render to YAML: {t_render:.3f} s  (target ≤ 1.0 s)  {'MET' if t_render <= 1.0 else 'NOT MET'}")
    print(f"  in-process / libyaml floor: {t_render / t_floor:.2f}×  (target ≤ 1.5×)  {'MET' if t_render / t_floor <= 1.5 else 'NOT MET'}")
    print(f"  our emitter / libyaml floor (emission alone): {t_emit / t_floor:.2f}×")
    print(f"  one-isvc CLI wall: {t_one:.3f} s  (target ≤ 0.25 s)  {'MET' if t_one <= 0.25 else 'NOT MET'}")
    if t_kustomize:
        print(f"  kubectl kustomize / ours (same objects): {t_kustomize / t_ours_subset:.1f}×")
    print(f"  LLM / InferenceService, {args.count} each → YAML in-process: {t_llm / t_render:.2f}×  (target ≤ 2×)  "
          f"{'MET' if t_llm <= 2 * t_render else 'NOT MET'}")
    print(f"  one-LLMInferenceService CLI wall: {t_one_llm:.3f} s, {t_one_llm / t_one:.2f}× the one-isvc figure  "
          f"(target ≤ 0.25 s)  {'MET' if t_one_llm <= 0.25 else 'NOT MET'}")


if __name__ == "__main__":
    main()
