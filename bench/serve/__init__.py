"""Helpers of bench/serve_bench.py: model builders, request bodies, server processes, wrk, in-process loops."""
