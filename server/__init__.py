"""A Starlette + ONNX Runtime model server speaking KServe's V1 and V2 (REST and gRPC) protocols.

Self-contained: it ships in its own image and imports nothing from ``kserve_compile``.
"""
