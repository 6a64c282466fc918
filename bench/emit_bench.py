"""Our YAML emitter vs PyYAML's libyaml ``CSafeDumper`` on 4,000 KServe-shaped objects.

    python bench/emit_bench.py [N_ISVC]

Prints the median of 5 runs of each, the ratio, the output size, and whether both outputs load
back to the same objects. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kserve_compile.emit import dump_json, dump_yaml, sort_objects  # noqa: E402

_spec = importlib.util.spec_from_file_location("emit_shapes", ROOT / "tests" / "emit" / "shapes.py")
shapes = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(shapes)  # type: ignore[union-attr]


def median_seconds(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def libyaml_dump(objs: list[dict]) -> str:
    return yaml.dump_all(objs, Dumper=yaml.CSafeDumper, sort_keys=True, allow_unicode=True, width=1 << 30)


def main() -> None:
    n_isvc = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    objs = sort_objects(shapes.kserve_objects(n_isvc))
    ours = dump_yaml(objs)
    libyaml = libyaml_dump(objs)
    same = list(yaml.load_all(ours, Loader=yaml.CSafeLoader)) == objs
    t_sort = median_seconds(lambda: sort_objects(objs))
    t_ours = median_seconds(lambda: dump_yaml(objs))
    t_lib = median_seconds(lambda: libyaml_dump(objs))
    t_json = median_seconds(lambda: dump_json(objs))
    mb_ours, mb_lib = len(ours.encode()) / 1e6, len(libyaml.encode()) / 1e6
    print(f"{len(objs)} objects; ours {mb_ours:.2f} MB, libyaml {mb_lib:.2f} MB")
    print(f"sort_objects            {t_sort:7.3f} s")
    print(f"dump_yaml (ours)        {t_ours:7.3f} s")
    print(f"yaml CSafeDumper        {t_lib:7.3f} s")
    print(f"ratio ours/libyaml      {t_ours / t_lib:7.2f}")
    print(f"dump_json               {t_json:7.3f} s")
    print(f"ours loads back equal:  {same}")


if __name__ == "__main__":
    main()
