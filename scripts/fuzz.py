"""Long fuzz runs of the render property (tests/fuzz): any input renders or is rejected naming a field.

    python scripts/fuzz.py [--examples 100000] [--seed N]

CI runs the same property with 2,000 examples and a fixed seed; this runs as many as you like with a random (or
given) seed and prints the figures. A failure prints the shrunk input and exits 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzz.strategies import mutated_isvc  # noqa: E402
from tests.fuzz.test_property_render import check_renders_or_names_a_field  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    run_seed = args.seed if args.seed is not None else random.randrange(2**32)
    counts = {"examples": 0}

    @seed(run_seed)
    @settings(max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(mutated_isvc())
    def prop(doc: object) -> None:
        counts["examples"] += 1
        check_renders_or_names_a_field(doc)

    start = time.perf_counter()
    try:
        prop()
    except Exception as exc:  # noqa: BLE001 - report whatever the property found
        print(f"seed {run_seed}: FAILED after {counts['examples']} examples: {type(exc).__name__}: {exc}")
        return 1
    elapsed = time.perf_counter() - start
    print(
        f"seed {run_seed}: {counts['examples']} examples, 0 failures, {elapsed:.1f} s ({counts['examples'] / elapsed:,.0f}/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
