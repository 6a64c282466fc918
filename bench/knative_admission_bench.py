#!/usr/bin/env python3
"""What Knative's offline admission (``checks/knative.py``) costs a render: the driver over 1,000 generated
InferenceServices (``bench/workload.py``) in Knative mode and in Standard mode, with the checks and with them
replaced by a no-op (the baseline), timed alternately round by round in this one process.

Usage: python bench/knative_admission_bench.py [--rounds N] [--count N]
Prints each median and the median of the per-round ratios (checked ÷ baseline).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from workload import isvcs  # noqa: E402

from kserve_compile import driver  # noqa: E402
from kserve_compile.checks import knative  # noqa: E402 - the driver imports its knative_admission at each run
from kserve_compile.inputs.parse import Document  # noqa: E402


def documents(count: int, mode: str) -> list[Document]:
    out = []
    for i, isvc in enumerate(isvcs(count)):
        isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] = mode
        out.append(Document(isvc, "bench.yaml", i))
    return out


def timed(docs: list[Document]) -> float:
    start = time.perf_counter()
    driver.compile(docs)
    return time.perf_counter() - start


def paired(docs: list[Document], rounds: int) -> tuple[float, float, float, int]:
    """(checked median, baseline median, median ratio, Knative Services per run)."""
    checked_fn = knative.knative_admission
    services = sum(
        1 for o in driver.compile(docs).objects if o.get("kind") == "Service" and "knative" in o["apiVersion"]
    )
    checked: list[float] = []
    baseline: list[float] = []
    for _ in range(rounds):
        checked.append(timed(docs))
        knative.knative_admission = _no_check  # type: ignore[assignment]
        try:
            baseline.append(timed(docs))
        finally:
            knative.knative_admission = checked_fn
    ratio = statistics.median(c / b for c, b in zip(checked, baseline, strict=True))
    return statistics.median(checked), statistics.median(baseline), ratio, services


def _no_check(*_: Any, **__: Any) -> list[Any]:
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    for mode in ("Knative", "Standard"):
        docs = documents(args.count, mode)
        driver.compile(docs)  # imports and first-use caches
        checked, baseline, ratio, services = paired(docs, args.rounds)
        print(
            f"{mode:8} {args.count} isvcs ({services} Knative Services): with the checks {checked:.3f} s, "
            f"without {baseline:.3f} s (median of {args.rounds}); ratio {ratio:.3f}×"
        )


if __name__ == "__main__":
    main()
