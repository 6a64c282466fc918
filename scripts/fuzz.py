"""Long fuzz runs of the render properties (tests/fuzz): any input renders or is rejected naming a field.

    python scripts/fuzz.py [--examples 100000] [--seed N] [--every-kind]

Without --every-kind: generated and mutated InferenceServices (tests/fuzz/test_property_render.py); with it: real
inputs of every kind mutated one to three fields at a time, through the driver
(tests/fuzz/test_property_every_kind.py). CI runs both with a fixed number of examples and seeds; this runs as many
as you like with a random (or given) seed and prints the figures. A failure prints the shrunk input and exits 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzz.strategies import mutated_inputs, mutated_isvc  # noqa: E402
from tests.fuzz.test_property_every_kind import check_driver  # noqa: E402
from tests.fuzz.test_property_render import check_renders_or_names_a_field  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--every-kind", action="store_true", help="real inputs of every kind, mutated")
    args = ap.parse_args()
    run_seed = args.seed if args.seed is not None else random.randrange(2**32)
    counts = {"examples": 0}

    @seed(run_seed)
    @settings(max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(mutated_inputs() if args.every_kind else mutated_isvc())
    def prop(case: object) -> None:
        counts["examples"] += 1
        if args.every_kind:
            check_driver(*case)  # type: ignore[misc]
        else:
            check_renders_or_names_a_field(case)

    start = time.perf_counter()
    try:
        prop()
    except Exception as exc:  # noqa: BLE001 - report whatever the property found
        traceback.print_exception(exc)  # with hypothesis' note of the shrunk example that fails
        print(f"seed {run_seed}: FAILED after {counts['examples']} examples: {type(exc).__name__}: {exc}")
        return 1
    elapsed = time.perf_counter() - start
    print(
        f"seed {run_seed}: {counts['examples']} examples, 0 failures, {elapsed:.1f} s ({counts['examples'] / elapsed:,.0f}/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
