"""Golden status: for every golden/<name>/ with an expected-status.json, ``kserve-compile status`` reports exactly that.

expected-status.json holds what ``kserve-compile status -o json`` prints: one entry per InferenceService, its
``namespace/name`` under ``name`` beside the status fields (url, address, components, deploymentMode). Each file was
checked by hand against KServe's status code and tests (the scenario's input.yaml header names them); regenerate with ``python tests/test_golden_status.py --regen <scenario>`` and review.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
STATUS_FILE = "expected-status.json"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if (p / STATUS_FILE).is_file() and (p / "input.yaml").is_file())


def status_rows(scenario: Path) -> list[dict[str, Any]]:
    from kserve_compile.api import render_result

    return [{"name": ref, **status} for ref, status in render_result([str(scenario / "input.yaml")]).status_rows()]


def status_text(rows: list[dict[str, Any]]) -> str:
    return json.dumps(rows, indent=2, sort_keys=True) + "\n"


def test_there_are_enough_status_scenarios() -> None:
    assert len(SCENARIOS) >= 8, SCENARIOS


@pytest.mark.parametrize("name", SCENARIOS)
def test_golden_status(name: str) -> None:
    scenario = GOLDEN / name
    expected_text = (scenario / STATUS_FILE).read_text("utf-8")
    rows = status_rows(scenario)
    actual_text = status_text(rows)
    diff = "".join(
        difflib.unified_diff(
            expected_text.splitlines(keepends=True),
            actual_text.splitlines(keepends=True),
            f"golden/{name}/{STATUS_FILE}",
            "computed",
        )
    )
    assert rows == json.loads(expected_text), diff
    assert actual_text == expected_text, diff


@pytest.mark.parametrize("name", SCENARIOS)
def test_status_matches_the_rendered_objects(name: str) -> None:
    """The status address names a Service the render produced (or, in Knative mode, the ksvc/ExternalName Service)."""
    from kserve_compile.driver import compile as compile_documents
    from kserve_compile.inputs.parse import parse_paths

    objects = compile_documents(parse_paths([str(GOLDEN / name / "input.yaml")])).objects
    service_hosts = {
        f"{o['metadata']['name']}.{o['metadata']['namespace']}.svc.cluster.local"
        for o in objects
        if o.get("kind") == "Service"
    }
    for row in status_rows(GOLDEN / name):
        address = row.get("address", {}).get("url")
        if address is None:
            continue
        host = address.removeprefix("http://").split(":")[0]
        assert host in service_hosts, (address, sorted(service_hosts))


# ingress_reconciler_test.go TestGetServiceHost (:1324-1420) and TestGetServiceUrl (:1422-...): KServe cuts the isvc host
# out of the entry component's Knative route host. The route host is set here through the Service name and a
# domainTemplate that reproduces each test's URL (lower-cased: GenerateDomainName validates the host).
@pytest.mark.parametrize(
    ("template", "namespace", "components", "expected"),
    [
        (
            "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}",
            "user1",
            {"predictor": "kftest-predictor-default"},
            "kftest.user1.example.com",
        ),
        (
            "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
            "user1",
            {"predictor": "kftest-predictor-default"},
            "kftest-user1.example.com",
        ),
        (
            "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}",
            "user1",
            {"predictor": "kftest-predictor-default", "transformer": "kservetest-transformer"},
            "kservetest.user1.example.com",
        ),
        (
            "{{ .Name }}.{{ .IngressDomain }}",
            "test",
            {"predictor": "my-model-predictor-default"},
            "my-model.example.com",
        ),
        ("{{ .Name }}.{{ .IngressDomain }}", "test", {"predictor": "my-model-predictor"}, "my-model.example.com"),
        (
            "{{ .Name }}.{{ .IngressDomain }}",
            "test",
            {"predictor": "my-model-predictor", "transformer": "my-model-transformer-default"},
            "my-model.example.com",
        ),
        # With KServe's shipped domainTemplate, namespace "default" makes the host contain "-default" as well.
        (
            "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
            "default",
            {"predictor": "foo-predictor"},
            "foo.example.com",
        ),
    ],
)
def test_knative_isvc_host_is_cut_from_the_route_host(
    template: str, namespace: str, components: dict[str, str], expected: str
) -> None:
    from kserve_compile.inputs.config import parse_config
    from kserve_compile.plan.routes import RoutedComponent, RouteInput
    from kserve_compile.plan.status import knative_status
    from kserve_compile.render.ingress.virtualservice import external_host

    config = parse_config(
        {
            "ingress": json.dumps(
                {
                    "ingressGateway": "knative-serving/knative-ingress-gateway",
                    "domainTemplate": template,
                }
            )
        }
    )
    route = RouteInput(
        name=components["predictor"].split("-predictor")[0],
        namespace=namespace,
        labels={},
        annotations={},
        components={kind: RoutedComponent(kind, service, None) for kind, service in components.items()},
    )
    assert external_host(route, config) == expected
    assert knative_status(route, config)["url"] == "http://" + expected


def _regen(names: list[str]) -> None:
    for name in names:
        scenario = GOLDEN / Path(name).name
        if not (scenario / "input.yaml").is_file():
            raise SystemExit(f"no scenario {name!r}")
        (scenario / STATUS_FILE).write_text(status_text(status_rows(scenario)), "utf-8")
        print(f"wrote golden/{scenario.name}/{STATUS_FILE}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--regen":
        raise SystemExit("usage: python tests/test_golden_status.py --regen SCENARIO...")
    sys.path.insert(0, str(ROOT))
    _regen(sys.argv[2:])
