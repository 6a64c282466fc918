"""The two benchmark models, built at run time (deterministic: seeded).

* ``mlp``: FP32 input[-1, 64] -> Gemm 128 -> Relu -> Gemm 10 -> output FP32[-1, 10] (onnx helper API).
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


def build_mlp(directory: Path, features: int = 64, hidden: int = 128, classes: int = 10) -> BenchModel:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    weights = [
        numpy_helper.from_array((rng.standard_normal((features, hidden)) / 8).astype(np.float32), "w1"),
        numpy_helper.from_array((rng.standard_normal(hidden) / 8).astype(np.float32), "b1"),
        numpy_helper.from_array((rng.standard_normal((hidden, classes)) / 8).astype(np.float32), "w2"),
        numpy_helper.from_array((rng.standard_normal(classes) / 8).astype(np.float32), "b2"),
    ]
    nodes = [
        helper.make_node("Gemm", ["input", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("Gemm", ["hr", "w2", "b2"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", features])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", classes])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    path = directory / "mlp" / "model.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return BenchModel("mlp", path, "input", features, ("output",))


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
    return [build_mlp(directory), build_classifier(directory)]


def sample_rows(model: BenchModel, rows: int, seed: int) -> np.ndarray:
    """Request data: float32 values with few digits, as a client would send measured features."""
    rng = np.random.default_rng(seed)
    return np.round(rng.standard_normal((rows, model.features)), 3).astype(np.float32)
