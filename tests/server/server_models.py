"""ONNX models built at test time: the onnx helper API and skl2onnx."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# V2 datatype -> ONNX element type, for every datatype the identity model carries.
ONNX_TYPES = {
    "BOOL": TensorProto.BOOL,
    "UINT8": TensorProto.UINT8,
    "UINT16": TensorProto.UINT16,
    "UINT32": TensorProto.UINT32,
    "UINT64": TensorProto.UINT64,
    "INT8": TensorProto.INT8,
    "INT16": TensorProto.INT16,
    "INT32": TensorProto.INT32,
    "INT64": TensorProto.INT64,
    "FP16": TensorProto.FLOAT16,
    "FP32": TensorProto.FLOAT,
    "FP64": TensorProto.DOUBLE,
    "BYTES": TensorProto.STRING,
}


def _save(graph: onnx.GraphProto, path: Path, opset: int = 17) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def mlp(path: Path, seed: int = 0) -> Path:
    """FP32 x[batch, 4] -> scores FP32 [batch, 3] and label INT64 [batch] (argmax)."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["scores"]),
        helper.make_node("ArgMax", ["scores"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 3]),
        ],
        [w, b],
    )
    return _save(graph, path)


def identity_all_types(path: Path) -> Path:
    """One Identity per datatype: in_<DT>[batch, 3] -> out_<DT>[batch, 3]."""
    nodes, inputs, outputs = [], [], []
    for name, element in ONNX_TYPES.items():
        nodes.append(helper.make_node("Identity", [f"in_{name}"], [f"out_{name}"]))
        inputs.append(helper.make_tensor_value_info(f"in_{name}", element, ["batch", 3]))
        outputs.append(helper.make_tensor_value_info(f"out_{name}", element, ["batch", 3]))
    return _save(helper.make_graph(nodes, "types", inputs, outputs), path)


def two_inputs(path: Path) -> Path:
    """a FP32[batch, 2] + b FP32[batch, 2] -> sum FP32[batch, 2]."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["sum"])],
        "add",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 2]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 2]),
        ],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["batch", 2])],
    )
    return _save(graph, path)


def failing(path: Path) -> Path:
    """Reshape x[batch, 4] to [2, 2]: valid input by the metadata, fails in ONNX Runtime unless batch is 1."""
    shape = numpy_helper.from_array(np.array([2, 2], dtype=np.int64), "target")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["y"])],
        "failing",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [shape],
    )
    return _save(graph, path)


def iris_classifier(path: Path) -> tuple[Path, np.ndarray]:
    """A scikit-learn LogisticRegression on iris via skl2onnx (outputs label, probabilities)."""
    from skl2onnx import to_onnx
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    x, y = load_iris(return_X_y=True)
    x = x.astype(np.float32)
    classifier = LogisticRegression(max_iter=500).fit(x, y)
    onx = to_onnx(classifier, x[:1], options={id(classifier): {"zipmap": False}}, target_opset=17)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onx.SerializeToString())
    return path, x


def slow(path: Path, layers: int = 24, width: int = 256) -> Path:
    """FP32 x[batch, width] -> y[batch, width] through ``layers`` MatMul+Relu: a few ms per run."""
    rng = np.random.default_rng(1)
    nodes, weights, current = [], [], "x"
    for i in range(layers):
        weights.append(numpy_helper.from_array((rng.standard_normal((width, width)) / 16).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [current, f"w{i}"], [f"m{i}"]))
        out = "y" if i == layers - 1 else f"r{i}"
        nodes.append(helper.make_node("Relu", [f"m{i}"], [out]))
        current = out
    graph = helper.make_graph(
        nodes,
        "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
        weights,
    )
    return _save(graph, path)


def heavy(path: Path, megabytes: int) -> Path:
    """FP32 x[n] + w[n] with ``w`` (``megabytes`` MiB) in a sparse external file: loading it needs that much memory,
    the disk holds next to nothing."""
    n = megabytes * (1 << 20) // 4
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(n * 4))):
        w.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "heavy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
        [w],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / "weights.bin").open("wb") as weights:
        weights.truncate(n * 4)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


def future_opset(path: Path) -> Path:
    """A valid graph stamped with an opset ONNX Runtime does not know (its loader fails with FAIL)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "future",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 999)])
    model.ir_version = 9
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path
