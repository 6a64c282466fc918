"""Builders for each object KServe creates: pure functions from typed inputs to plain dicts."""
