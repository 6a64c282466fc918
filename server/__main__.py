"""``python -m server --model_name NAME --model_dir DIR [--http_port 8080 --grpc_port 8081 ...]``.

The model server's packages (onnxruntime, starlette, uvicorn, ...) are the ``server`` extra; without them this says
which command installs them, in one line, instead of a traceback (they are imported at start-up, some lazily).
"""

import sys

_SERVER_PACKAGES = frozenset({"onnxruntime", "starlette", "uvicorn", "numpy", "grpc", "google", "prometheus_client"})


def _run() -> int:
    try:
        from server.main import main

        return main()
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _SERVER_PACKAGES:
            raise
        sys.stderr.write(
            f"error: the model server needs the Python package {exc.name!r}: pip install 'kserve-compile[server]'\n"
        )
        return 2


sys.exit(_run())
