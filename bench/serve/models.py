"""The two benchmark models, built at run time (deterministic: seeded).

* ``mlp``: FP32 input[-1, 64] -> Gemm 128 -> Relu -> Gemm 10 -> output FP32[-1, 10] (onnx helper API).
* ``wide``: the same shape of MLP, wider: FP32 input[-1, 256] -> 1024 -> Relu -> 1024 -> Relu -> 10 (1.3 M weights,
  5 MB: one row at a time is bound by reading the weights, so merging rows pays — the dynamic batching case).
* ``clf``: a scikit-learn RandomForestClassifier (20 trees, depth 8) on 16 features via skl2onnx, without
  ZipMap: float_input FP32[-1, 16] -> label INT64[-1], probabilities FP32[-1, 3].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class BenchModel:
    name: str
    path: Path  # <dir>/model.onnx: the directory is what servers get as --model_dir
    input_name: str
    features: int
    outputs: tuple[str, ...]

    @property
    def model_dir(self) -> Path:
        return self.path.parent


def build_mlp(
    directory: Path, name: str = "mlp", features: int = 64, hidden: tuple[int, ...] = (128,), classes: int = 10
) -> BenchModel:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    widths = [features, *hidden, classes]
    weights, nodes = [], []
    current = "input"
    for layer, (fan_in, fan_out) in enumerate(zip(widths, widths[1:]), start=1):
        scale = 1 / np.sqrt(fan_in)
        weights.append(
            numpy_helper.from_array((rng.standard_normal((fan_in, fan_out)) * scale).astype(np.float32), f"w{layer}")
        )
        weights.append(numpy_helper.from_array((rng.standard_normal(fan_out) * scale).astype(np.float32), f"b{layer}"))
        last = layer == len(widths) - 1
        out = "output" if last else f"h{layer}"
        nodes.append(helper.make_node("Gemm", [current, f"w{layer}", f"b{layer}"], [out]))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [f"r{layer}"]))
            current = f"r{layer}"
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", features])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", classes])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    path = directory / name / "model.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return BenchModel(name, path, "input", features, ("output",))


def build_wide(directory: Path) -> BenchModel:
    return build_mlp(directory, "wide", features=256, hidden=(1024, 1024))


def build_classifier(directory: Path, features: int = 16) -> BenchModel:
    from skl2onnx import to_onnx
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    x, y = make_classification(n_samples=2000, n_features=features, n_informative=8, n_classes=3, random_state=7)
    x = x.astype(np.float32)
    forest = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=7).fit(x, y)
    onx = to_onnx(forest, x[:1], options={id(forest): {"zipmap": False}}, target_opset=17)
    path = directory / "clf" / "model.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onx.SerializeToString())
    return BenchModel("clf", path, onx.graph.input[0].name, features, tuple(o.name for o in onx.graph.output))


def build_all(directory: Path) -> list[BenchModel]:
    return [build_mlp(directory), build_classifier(directory), build_wide(directory)]


def sample_rows(model: BenchModel, rows: int, seed: int) -> np.ndarray:
    """Request data: float32 values with few digits, as a client would send measured features."""
    rng = np.random.default_rng(seed)
    return np.round(rng.standard_normal((rows, model.features)), 3).astype(np.float32)
