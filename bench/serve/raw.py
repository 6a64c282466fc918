"""The in-process limits: no HTTP, one thread, the same bodies the servers get.

* ``run``: ``InferenceSession.run`` on a ready array, back to back.
* ``codec``: decode the V2 body with orjson (or split off the binary tensor), run, encode the response
  with orjson — the least work any V2 server must do per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
import orjson

from serve.bodies import Body
from serve.models import BenchModel

_NUMPY = orjson.OPT_SERIALIZE_NUMPY
_DATATYPES = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}


def session(model: BenchModel) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(model.path), sess_options=options, providers=["CPUExecutionProvider"])


def _rate(step: Callable[[], object], seconds: float) -> float:
    """Calls per second of ``step``, timed in batches of calls until ``seconds`` have passed."""
    for _ in range(50):
        step()
    calls, started = 0, time.perf_counter()
    while True:
        for _ in range(200):
            step()
        calls += 200
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return calls / elapsed


def run_rate(sess: ort.InferenceSession, model: BenchModel, rows: np.ndarray, seconds: float) -> float:
    names = list(model.outputs)
    feeds = {model.input_name: rows}
    return _rate(lambda: sess.run(names, feeds), seconds)


def codec_step(sess: ort.InferenceSession, model: BenchModel, body: Body) -> Callable[[], bytes]:
    names = list(model.outputs)
    data, split = body.data, body.header_length

    def json_step() -> bytes:
        tensor = orjson.loads(data)["inputs"][0]
        x = np.asarray(tensor["data"], dtype=np.float32).reshape(tensor["shape"])
        results = sess.run(names, {tensor["name"]: x})
        outputs = [
            {"name": n, "datatype": _DATATYPES[r.dtype], "shape": list(r.shape), "data": r.reshape(-1)}
            for n, r in zip(names, results)
        ]
        return orjson.dumps({"model_name": model.name, "outputs": outputs}, option=_NUMPY)

    def binary_step() -> bytes:
        tensor = orjson.loads(data[:split])["inputs"][0]
        x = np.frombuffer(data, dtype=np.float32, offset=split).reshape(tensor["shape"])
        results = sess.run(names, {tensor["name"]: x})
        outputs = [
            {
                "name": n,
                "datatype": _DATATYPES[r.dtype],
                "shape": list(r.shape),
                "parameters": {"binary_data_size": r.nbytes},
            }
            for n, r in zip(names, results)
        ]
        return b"".join([orjson.dumps({"model_name": model.name, "outputs": outputs}), *(r.tobytes() for r in results)])

    return json_step if split is None else binary_step


def codec_rate(sess: ort.InferenceSession, model: BenchModel, body: Body, seconds: float) -> float:
    return _rate(codec_step(sess, model, body), seconds)
