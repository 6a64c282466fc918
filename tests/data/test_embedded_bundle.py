"""The parsed bundle of the embedded defaults (kserve_compile/data/embedded.json) matches the YAML it is made from."""

from __future__ import annotations

from pathlib import Path

import orjson

from kserve_compile import embedded

BUNDLE = Path(embedded.__file__).parent / "data" / embedded.BUNDLE


def test_bundle_is_current_with_the_yaml_sources() -> None:
    committed = BUNDLE.read_bytes()
    assert committed == embedded.bundle_bytes(), "stale: run `python -m kserve_compile.embedded`"


def test_bundle_holds_every_source_file_and_nothing_else() -> None:
    assert sorted(orjson.loads(BUNDLE.read_bytes())) == sorted(embedded.source_files())


def test_runtime_files_are_the_runtimes_directory() -> None:
    on_disk = sorted(f"runtimes/{p.name}" for p in (Path(embedded.__file__).parents[1] / "runtimes").glob("*.yaml"))
    assert embedded.runtime_files() == on_disk
    assert all(embedded.documents(path)[0]["kind"] == "ClusterServingRuntime" for path in on_disk)


def test_documents_are_the_parsed_yaml() -> None:
    parsed = embedded.parse_sources()
    for path in embedded.source_files():
        assert embedded.documents(path) == parsed[path], path
