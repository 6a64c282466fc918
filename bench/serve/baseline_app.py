"""The floor for a Python HTTP model server: one Starlette route that only decodes, runs and encodes.

    python baseline_app.py --model_name mlp --model_dir DIR --http_port 8080

orjson in, ``InferenceSession.run`` on the event loop, orjson out; uvicorn with uvloop and httptools,
no access log. No protocol checks at all (names, datatypes, shapes, sizes are trusted), so the
distance between this and a real server is what the Open Inference Protocol costs. Binary inputs and
outputs are read and written only as far as this benchmark sends and asks for them.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import onnxruntime as ort
import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_DATATYPES = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}


def build_app(model_name: str, model_dir: str) -> Starlette:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        os.path.join(model_dir, "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
    )
    input_name = session.get_inputs()[0].name
    output_names = [o.name for o in session.get_outputs()]

    async def infer(request: Request) -> Response:
        body = await request.body()
        header_length = request.headers.get("inference-header-content-length")
        if header_length is None:
            tensor = orjson.loads(body)["inputs"][0]
            x = np.asarray(tensor["data"], dtype=np.float32).reshape(tensor["shape"])
        else:
            split = int(header_length)
            tensor = orjson.loads(body[:split])["inputs"][0]
            x = np.frombuffer(body, dtype=np.float32, offset=split).reshape(tensor["shape"])
        results = session.run(output_names, {input_name: x})
        outputs = [
            {"name": n, "datatype": _DATATYPES[r.dtype], "shape": list(r.shape)} for n, r in zip(output_names, results)
        ]
        if header_length is None:
            for out, r in zip(outputs, results):
                out["data"] = r.reshape(-1)
            return Response(
                orjson.dumps({"model_name": model_name, "outputs": outputs}, option=orjson.OPT_SERIALIZE_NUMPY),
                media_type="application/json",
            )
        for out, r in zip(outputs, results):
            out["parameters"] = {"binary_data_size": r.nbytes}
        head = orjson.dumps({"model_name": model_name, "outputs": outputs})
        return Response(
            b"".join([head, *(r.tobytes() for r in results)]),
            media_type="application/octet-stream",
            headers={"inference-header-content-length": str(len(head))},
        )

    async def health(request: Request) -> Response:
        return Response(b'{"ready":true}', media_type="application/json")

    return Starlette(
        routes=[
            Route(f"/v2/models/{model_name}/infer", infer, methods=["POST"]),
            Route("/v2/health/ready", health, methods=["GET"]),
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", required=True)
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--http_port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(
        build_app(args.model_name, args.model_dir),
        host="127.0.0.1",
        port=args.http_port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )
