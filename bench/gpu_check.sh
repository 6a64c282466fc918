#!/usr/bin/env bash
# The model server's CUDA path on a machine with an NVIDIA GPU, in one go (issue 14, item 8):
#   1. the GPU and ONNX Runtime's CUDA execution provider are there (installs onnxruntime-gpu when PyPI is reachable);
#   2. a smoke check in-process: a model loads on CUDAExecutionProvider with I/O binding and answers as the CPU does;
#   3. the server test suite (servers start with --device auto, i.e. on the GPU);
#   4. the serving benchmark (--quick; KServe left out unless PyPI is reachable) and the responsiveness benchmark.
# Usage, from the repository root, with the project's virtualenv active:  bash bench/gpu_check.sh [output-dir]
# Figures land in output-dir (default .bench/gpu): record them in docs/performance.md, "GPU".
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-.bench/gpu}"
mkdir -p "$out"
status=0

step() { echo; echo "=== $* ==="; }

step "GPU"
if ! nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.csv"; then
  echo "no NVIDIA GPU here (nvidia-smi failed)" >&2; exit 2
fi

step "ONNX Runtime CUDA provider"
if ! python -c "import onnxruntime as o, sys; sys.exit('CUDAExecutionProvider' not in o.get_available_providers())"; then
  pip install -q onnxruntime-gpu && pip uninstall -q -y onnxruntime && pip install -q --force-reinstall --no-deps onnxruntime-gpu \
    || { echo "onnxruntime has no CUDAExecutionProvider and onnxruntime-gpu could not be installed" >&2; exit 2; }
fi
python -c "import onnxruntime as o; print(o.__version__, o.get_available_providers())" | tee "$out/onnxruntime.txt"

step "smoke: CUDA provider, I/O binding, same answers as the CPU"
python - <<'PY' 2>&1 | tee "$out/smoke.txt" || status=1
import sys, tempfile
from pathlib import Path
import numpy as np
sys.path.insert(0, "tests/server")
import server_models
from server.model import OnnxModel, SessionSettings
from server.providers import CPU, default_providers

root = Path(tempfile.mkdtemp())
path = server_models.slow(root / "model.onnx")
gpu = OnnxModel("slow", path, "1", SessionSettings(providers=default_providers("cuda")))
gpu.load()
cpu = OnnxModel("slow", path, "1", SessionSettings(providers=[CPU]))
cpu.load()
x = {"x": np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)}
got, want = gpu.run(x, ["y"])[0], cpu.run(x, ["y"])[0]
print("providers", gpu.providers, "io binding", gpu._bind_device, "max abs diff", float(np.abs(got - want).max()))
assert gpu.providers[0] == "CUDAExecutionProvider" and gpu._bind_device == "cuda"
np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
print("smoke OK")
PY

step "server tests (device auto = CUDA)"
python -m pytest -q -p no:cacheprovider tests/server 2>&1 | tee "$out/tests.txt" | tail -5
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "serving benchmark"
kserve_flag=--skip-kserve
[ -x .bench/kserve-venv/bin/python ] && kserve_flag=
python bench/serve_bench.py --quick $kserve_flag > "$out/serve_bench.md" 2> "$out/serve_bench.log" || status=1
tail -25 "$out/serve_bench.md"

step "responsiveness benchmark"
python bench/server_responsiveness.py --seconds 3 > "$out/responsiveness.md" 2> "$out/responsiveness.log" || status=1
cat "$out/responsiveness.md"

echo; echo "gpu_check: exit $status; outputs in $out"
exit $status
