"""``kserve-compile graph run``: the golden InferenceGraph scenarios run against local stub servers, and one graph
over a real ``python -m server`` with an ONNX model."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml
from router_stubs import json_answer, stubs

from kserve_compile.cli.graph_command import plan_for as plan_local
from kserve_compile.errors import CompileError, UsageError
from kserve_compile.graph.run import LocalModel, parse_pairs, run_local

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_GRAPHS = sorted(p for p in (ROOT / "golden").iterdir() if "graph" in p.name)
REQUESTS = {"graph-switch-knative": {"version": "v2"}}


def _rendered_step_paths(scenario: Path) -> set[str]:
    """The paths of the serviceUrls KServe's controller gives the router (from the golden --graph-json)."""
    from urllib.parse import urlsplit

    paths = set()
    for obj in yaml.safe_load_all((scenario / "expected.yaml").read_text()):
        spec = (obj or {}).get("spec", {})
        template = spec.get("template", {}).get("spec", {})
        for container in template.get("containers", []):
            args = container.get("args", [])
            if "--graph-json" in args:
                graph = orjson.loads(args[args.index("--graph-json") + 1])
                for node in graph["nodes"].values():
                    paths |= {
                        urlsplit(s["serviceUrl"]).path or "/" for s in node.get("steps", []) if s.get("serviceUrl")
                    }
    return paths


def _backend_names(scenario: Path) -> list[str]:
    names = []
    for doc in yaml.safe_load_all((scenario / "input.yaml").read_text()):
        if doc and doc.get("kind") == "InferenceService":
            names.append(doc["metadata"]["name"])
        if doc and doc.get("kind") == "InferenceGraph":
            for node in doc["spec"]["nodes"].values():
                for step in node.get("steps", []):
                    if step.get("serviceUrl"):
                        names.append(step["serviceUrl"].split("//")[1].split(".")[0].split("/")[0])
    return names


def test_there_are_golden_graph_scenarios() -> None:
    assert len(GOLDEN_GRAPHS) >= 5


@pytest.mark.parametrize("scenario", GOLDEN_GRAPHS, ids=[p.name for p in GOLDEN_GRAPHS])
def test_golden_graph_runs_on_local_stubs(scenario: Path) -> None:
    names = _backend_names(scenario)

    async def case() -> None:
        async with stubs(*[json_answer({"predictions": [i]}) for i in range(len(names))]) as servers:
            backends = {name: s.base for name, s in zip(names, servers)}
            plan = plan_local([str(scenario / "input.yaml")], backends, {})
            assert plan.models == ()
            out, err = io.StringIO(), io.StringIO()
            request = orjson.dumps(REQUESTS.get(scenario.name, {"instances": [[6.8, 2.8, 4.8, 1.4]]}))
            code = await run_local(plan, port=0, data=request, headers=[], trace=True, out=out, err=err)
            assert code == 0, err.getvalue() + out.getvalue()
            answer = orjson.loads(out.getvalue())
            assert isinstance(answer, dict)
            called = [path for s in servers for path in s.paths]
            assert called, "no step reached a backend"
            # every local call used the predict path KServe's controller renders for that step
            assert set(called) <= _rendered_step_paths(scenario), (called, _rendered_step_paths(scenario))
            assert err.getvalue().count("trace: root[") >= 1 and "status: 200" in err.getvalue()

    asyncio.run(case())


def test_switch_golden_trace_shows_the_chosen_step() -> None:
    scenario = ROOT / "golden" / "graph-switch-knative"

    async def case() -> str:
        async with stubs(json_answer({"v": 1}), json_answer({"v": 2}), json_answer({"echo": True})) as (v1, v2, echo):
            plan = plan_local(
                [str(scenario / "input.yaml")], {"sklearn-v1": v1.base, "sklearn-v2": v2.base, "echo": echo.base}, {}
            )
            out, err = io.StringIO(), io.StringIO()
            code = await run_local(plan, port=0, data=b'{"version":"v9"}', headers=[], trace=True, out=out, err=err)
            assert code == 0 and orjson.loads(out.getvalue()) == {"echo": True}
            assert echo.paths == ["/v1/models/echo:predict"] and not v1.paths and not v2.paths
            return err.getvalue()

    trace = asyncio.run(case())
    lines = [line for line in trace.splitlines() if line.startswith("trace:")]
    assert lines[0].startswith("trace: echo[0] -> http://127.0.0.1:") and ": 200 in " in lines[0]
    assert lines[1].startswith('trace: root[2] "fallback" -> node echo: 200 in ')
    assert '  request:  {"version":"v9"}' in trace


def test_a_step_without_a_backend_is_an_error_naming_it() -> None:
    scenario = ROOT / "golden" / "graph-ensemble-standard" / "input.yaml"
    with pytest.raises(CompileError) as info:
        plan_local([str(scenario)], {"tree-model": "http://127.0.0.1:1"}, {})
    (problem,) = info.value.problems
    assert problem.path == "spec.nodes.root.steps[1].serviceName"
    assert '"torch-model"' in problem.message and "--backend torch-model=URL" in problem.message


def test_backend_with_a_path_is_used_exactly_and_non_local_urls_are_noted() -> None:
    scenario = ROOT / "golden" / "graph-sequence-standard" / "input.yaml"
    plan = plan_local([str(scenario)], {"sklearn-first": "http://127.0.0.1:9/exact"}, {})
    steps = plan.spec.nodes["root"].steps
    assert steps[0].service_url == "http://127.0.0.1:9/exact"
    assert steps[1].service_url == "http://xgb-second.default.svc.cluster.local/v1/models/xgb-second:predict"
    assert any("--backend xgb-second=URL" in note for note in plan.notes)


def test_local_storage_uri_starts_a_model_server_in_the_plan(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.onnx").write_bytes(b"x")
    (tmp_path / "in.yaml").write_text(_GRAPH_AND_ISVC.format(uri="m"))
    ports = iter([40001, 40002])
    plan = plan_local([str(tmp_path / "in.yaml")], {}, {}, port_for=lambda: next(ports))
    assert plan.models == (LocalModel("iris", str(tmp_path / "m"), "iris", 40001),)
    assert [s.service_url for s in plan.spec.nodes["root"].steps] == [
        "http://127.0.0.1:40001/v1/models/iris:predict"
    ] * 2


def test_parse_pairs() -> None:
    assert parse_pairs(["a=http://x=y"], "--backend") == {"a": "http://x=y"}
    with pytest.raises(UsageError, match="--backend takes NAME=VALUE"):
        parse_pairs(["nope"], "--backend")


_GRAPH_AND_ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: iris
spec:
  predictor:
    model:
      modelFormat:
        name: onnx
      storageUri: {uri}
---
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: twice
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - name: first
        serviceName: iris
      - name: again
        serviceName: iris
        data: $response
        mapPredictionsToInstances: true
"""


def _identity_model(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def test_cli_runs_a_graph_over_a_real_onnx_model_server(tmp_path: Path) -> None:
    _identity_model(tmp_path / "iris" / "model.onnx")
    (tmp_path / "graph.yaml").write_text(_GRAPH_AND_ISVC.format(uri="file://" + str(tmp_path / "iris")))
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import cli; cli.main()",
            "graph",
            "run",
            str(tmp_path / "graph.yaml"),
            "--trace",
            "-d",
            '{"instances":[[6.8,2.8,4.8,1.5]]}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout) == {"predictions": [[6.8, 2.8, 4.8, 1.5]]}
    trace = result.stderr
    assert 'trace: root[0] "first" -> http://127.0.0.1:' in trace
    assert "/v1/models/iris:predict: 200 in " in trace
    # the second step got the first answer with predictions mapped to instances
    assert '  request:  {"instances":[[6.8,2.8,4.8,1.5]]}' in trace.split('"again"')[1]


def test_cli_errors() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "import cli; cli.main()", "graph", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    missing = run("run", "golden/graph-ensemble-standard/input.yaml", "-d", "{}")
    assert missing.returncode == 1 and "spec.nodes.root.steps[0].serviceName" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = run("run", "golden/graph-ensemble-standard/input.yaml", "--backend", "oops")
    assert bad.returncode == 2 and "--backend takes NAME=VALUE" in bad.stderr
    none = run("show", "golden/batcher/input.yaml")
    assert none.returncode == 2
    assert none.stderr == "error: expected one InferenceGraph among the inputs, found: none\n"
    fmt = run("show", "golden/graph-switch-knative/input.yaml", "-o", "png")
    assert fmt.returncode == 2 and "unknown output format 'png': use mermaid or svg" in fmt.stderr


def test_cli_serves_the_graph_until_interrupted(tmp_path: Path) -> None:
    import signal
    import socket
    import time
    import urllib.request

    # a stub backend in a child process (the CLI under test is another process)
    stub_code = (
        "import asyncio\nfrom aiohttp import web\n"
        "async def h(r):\n    await r.read()\n    return web.Response(body=b'{\"predictions\":[7]}')\n"
        "async def main():\n    s = await asyncio.get_running_loop().create_server(web.Server(h), '127.0.0.1', 0)\n"
        "    print(s.sockets[0].getsockname()[1], flush=True)\n    await asyncio.Event().wait()\n"
        "asyncio.run(main())\n"
    )
    stub = subprocess.Popen([sys.executable, "-c", stub_code], stdout=subprocess.PIPE, text=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = None
    try:
        assert stub.stdout is not None
        stub_port = int(stub.stdout.readline())
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import cli; cli.main()",
                "graph",
                "run",
                "golden/graph-router-config/input.yaml",
                "--backend",
                f"someservice=http://127.0.0.1:{stub_port}",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        answer = None
        while time.monotonic() < deadline and answer is None:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/any", data=b'{"instances":[1]}')
                with urllib.request.urlopen(req, timeout=5) as resp:
                    answer = (resp.status, resp.read())
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
        assert answer == (200, b'{"predictions":[7]}')
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert (
            proc.stderr is not None and "InferenceGraph router-config-graph on http://127.0.0.1:" in proc.stderr.read()
        )
    finally:
        for p in (proc, stub):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_request_body_and_header_options(tmp_path: Path) -> None:
    from kserve_compile.cli.graph_command import _headers, _request_body

    (tmp_path / "req.json").write_bytes(b'{"instances":[1]}')
    assert _request_body(f"@{tmp_path / 'req.json'}") == b'{"instances":[1]}'
    assert _request_body('{"a":1}') == b'{"a":1}'
    with pytest.raises(UsageError, match="--data @/nonexistent/x.json"):
        _request_body("@/nonexistent/x.json")
    assert _headers(["X-Request-Id: 42", "Authorization:Bearer t"]) == [
        ("X-Request-Id", "42"),
        ("Authorization", "Bearer t"),
    ]
    with pytest.raises(UsageError, match="-H takes 'Name: value'"):
        _headers(["nocolon"])


def test_service_names_resolve_in_the_graphs_namespace(tmp_path: Path) -> None:
    isvc = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: m\n  namespace: {ns}\n"
        "spec:\n  predictor:\n    model:\n      modelFormat:\n        name: sklearn\n      protocolVersion: {proto}\n"
        "      storageUri: gs://b/m\n---\n"
    )
    graph = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nmetadata:\n  name: g\n  namespace: team\n"
        "spec:\n  nodes:\n    root:\n      routerType: Sequence\n      steps:\n      - serviceName: m\n"
    )
    (tmp_path / "in.yaml").write_text(isvc.format(ns="team", proto="v2") + isvc.format(ns="other", proto="v1") + graph)
    plan = plan_local([str(tmp_path / "in.yaml")], {"m": "http://127.0.0.1:9"}, {})
    assert plan.spec.nodes["root"].steps[0].service_url == "http://127.0.0.1:9/v2/models/m/infer"


_MODEL_CHAINER = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: isvc-sklearn-graph-1
spec:
  predictor:
    minReplicas: 1
    sklearn:
      storageUri: gs://kfserving-examples/models/sklearn/1.0/model
      args: ["--model_name=sklearn"]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: isvc-sklearn-graph-2
spec:
  predictor:
    minReplicas: 1
    sklearn:
      storageUri: gs://kfserving-examples/models/sklearn/1.0/model
      args: ["--model_name", "iris"]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: isvc-xgboost-graph
spec:
  predictor:
    minReplicas: 1
    xgboost:
      storageUri: gs://kfserving-examples/models/xgboost/1.5/model
---
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: model-chainer
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - serviceName: isvc-sklearn-graph-1
        dependency: Hard
      - serviceName: isvc-xgboost-graph
        data: $request
        dependency: Hard
      - serviceName: isvc-sklearn-graph-2
        data: $request
        dependency: Hard
"""


def _iris_onnx(path: Path) -> None:
    import numpy as np
    from skl2onnx import to_onnx
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    x, y = load_iris(return_X_y=True)
    x = x.astype(np.float32)
    classifier = LogisticRegression(max_iter=500).fit(x, y)
    onx = to_onnx(classifier, x[:1], options={id(classifier): {"zipmap": False}}, target_opset=17)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onx.SerializeToString())


def test_kserve_e2e_model_chainer_over_onnx_model_servers(tmp_path: Path) -> None:
    """KServe's ``test/e2e/graph/test_inference_graph.py::test_inference_graph``, run locally: its three isvcs (model
    names from ``--model_name`` args) served by ``python -m server`` with an iris classifier; KServe asserts
    ``predictions == [1, 1]`` for ``custom_predictor_input.json``."""
    _iris_onnx(tmp_path / "iris" / "model.onnx")
    (tmp_path / "ig.yaml").write_text(_MODEL_CHAINER)
    models = [
        f"--model={name}={tmp_path / 'iris'}"
        for name in ("isvc-sklearn-graph-1", "isvc-sklearn-graph-2", "isvc-xgboost-graph")
    ]
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import cli; cli.main()",
            "graph",
            "run",
            str(tmp_path / "ig.yaml"),
            *models,
            "--trace",
            "-d",
            '{"instances":[[6.8,2.8,4.8,1.4],[6.0,3.4,4.5,1.6]]}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout)["predictions"] == [1, 1]
    paths = [
        line.split(" -> ")[1].split(": ")[0].split("/", 3)[3]
        for line in result.stderr.splitlines()
        if line.startswith("trace: ")
    ]
    assert paths == ["v1/models/sklearn:predict", "v1/models/isvc-xgboost-graph:predict", "v1/models/iris:predict"]


def test_graph_run_without_the_router_extra_says_what_to_install() -> None:
    root = Path(__file__).resolve().parents[2]
    graph = root / "golden" / "graph-sequence-standard" / "input.yaml"
    code = (
        "import sys, runpy; sys.modules['httptools'] = None; "
        f"sys.argv = ['kserve-compile', 'graph', 'run', {str(graph)!r}, '--backend', 'sklearn-first=http://127.0.0.1:9', "
        "'--backend', 'xgb-second=http://127.0.0.1:9', '--data', '{}']; "
        f"runpy.run_path({str(root / 'cli.py')!r}, run_name='__main__')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=root)
    assert result.returncode == 2, result.stderr
    assert "pip install 'kserve-compile[router]'" in result.stderr and "internal error" not in result.stderr
