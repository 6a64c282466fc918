"""KServe's Python ModelServer serving an ONNX file with onnxruntime, as a KServe user would write it.

Runs in the KServe virtualenv (``.bench/kserve-venv``), never imports this project:

    python kserve_model.py --model_name mlp --model_dir DIR --http_port 8080 --enable_grpc false

A custom ``kserve.Model`` whose ``predict`` turns the V2 ``InferRequest`` into ONNX Runtime feeds
and the results into an ``InferResponse`` (binary outputs when the request asks for them). Every
other behaviour — routing, decoding, logging, metrics — is KServe's own, with its defaults.
"""

from __future__ import annotations

import argparse
import os

import kserve
import numpy as np
import onnxruntime as ort
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse
from kserve.protocol.rest import server as rest_server
from kserve.utils.utils import from_np_dtype, generate_uuid


class OnnxModel(kserve.Model):
    def __init__(self, name: str, model_dir: str) -> None:
        super().__init__(name)
        self.model_dir = model_dir
        self.session: ort.InferenceSession | None = None
        self.load()

    def load(self) -> bool:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one server core, as for the other servers
        options.inter_op_num_threads = 1
        path = os.path.join(self.model_dir, "model.onnx")
        self.session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.ready = True
        return self.ready

    def predict(self, payload, headers=None):  # noqa: ANN001, ANN201 - KServe's signature
        if isinstance(payload, InferRequest):
            feeds = {tensor.name: tensor.as_numpy() for tensor in payload.inputs}
            names = [o.name for o in payload.request_outputs] if payload.request_outputs else self.output_names
            binary = payload.use_binary_outputs
            outputs = []
            for name, array in zip(names, self.session.run(names, feeds)):
                out = InferOutput(name=name, shape=list(array.shape), datatype=from_np_dtype(array.dtype))
                out.set_data_from_numpy(array, binary_data=binary)
                outputs.append(out)
            return InferResponse(
                response_id=payload.id or generate_uuid(),
                model_name=self.name,
                infer_outputs=outputs,
                use_binary_outputs=binary,
                requested_outputs=payload.request_outputs,
            )
        # V1: {"instances": [[...], ...]}
        instances = np.asarray(payload["instances"], dtype=np.float32)
        result = self.session.run(self.output_names[:1], {self.session.get_inputs()[0].name: instances})[0]
        return {"predictions": result.tolist()}


def _bind_loopback() -> None:
    """KServe hard-codes host 0.0.0.0 for its REST server; the benchmark keeps every server on 127.0.0.1."""
    original = rest_server.RESTServer.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN202
        original(self, *args, **kwargs)
        self.config.host = "127.0.0.1"

    rest_server.RESTServer.__init__ = init


if __name__ == "__main__":
    parser = argparse.ArgumentParser(parents=[kserve.model_server.parser])
    parser.add_argument("--model_dir", required=True)
    args, _ = parser.parse_known_args()
    _bind_loopback()
    kserve.ModelServer().start([OnnxModel(args.model_name, args.model_dir)])
