"""docs/scale-to-zero.md shows what the compiler prints, and the command line reports the opt-in's errors as any other."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scale-to-zero.md"
EXAMPLE = ROOT / "examples" / "sklearn-iris-scale-to-zero.yaml"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def blocks(kind: str) -> list[str]:
    """The page's fenced blocks whose info string is ``kind``, in order."""
    out: list[str] = []
    current: list[str] | None = None
    wanted = False
    for line in DOC.read_text("utf-8").splitlines(keepends=True):
        if not line.startswith("```"):
            if current is not None:
                current.append(line)
        elif current is None:
            current, wanted = [], line[3:].strip() == kind
        else:
            out += ["".join(current)] if wanted else []
            current = None
    return out


def test_the_documented_objects_are_what_render_prints() -> None:
    result = cli("render", str(EXAMPLE), "-q")
    assert result.returncode == 0, result.stderr
    rendered = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(result.stdout)}
    documented = list(yaml.safe_load_all(blocks("yaml")[1]))  # [0] is the config key
    assert [(o["kind"], o["metadata"]["name"]) for o in documented] == [
        ("HTTPScaledObject", "sklearn-iris-predictor"),
        ("Service", "sklearn-iris-predictor-proxy"),
        ("Ingress", "sklearn-iris"),
    ]
    for obj in documented:
        actual = rendered[(obj["kind"], obj["metadata"]["name"])]
        actual["metadata"].pop("annotations")  # the page leaves them out, and says so
        assert actual == obj
    assert ("HorizontalPodAutoscaler", "sklearn-iris-predictor") not in rendered
    assert "replicas" not in rendered[("Deployment", "sklearn-iris-predictor")]["spec"]


def test_the_documented_status_is_what_status_prints() -> None:
    result = cli("status", str(EXAMPLE), "-q")
    assert result.returncode == 0, result.stderr
    [shown] = [b for b in blocks("") if b.startswith("$ kserve-compile status")]
    assert shown.split("\n", 1)[1] == result.stdout


def test_the_documented_config_key_parses() -> None:
    from kserve_compile.inputs.config import parse_config

    data = yaml.safe_load(blocks("yaml")[0])["data"]
    settings = parse_config(data).isvc_compile.scale_to_zero
    assert settings.enabled and settings.scaledown_period == 300
    assert str(settings.interceptor) == "keda/keda-add-ons-http-interceptor-proxy:8080"


def test_an_opt_in_that_cannot_work_exits_1_with_a_located_error() -> None:
    text = EXAMPLE.read_text("utf-8").replace("deploymentMode: Standard", "deploymentMode: Knative")
    result = cli("render", "-", stdin=text)
    assert result.returncode == 1 and result.stdout == ""
    assert re.search(
        r"^<stdin>:\d+:\d+: InferenceService/sklearn-iris: metadata\.annotations\[kserve-compile\.io/scale-to-zero\]: "
        r"scale to zero through KEDA's HTTP add-on \(kserve-compile\.io/scale-to-zero\) is for Standard deployment mode",
        result.stderr,
        re.M,
    ), result.stderr
    assert "Traceback" not in result.stderr


def test_validate_checks_the_add_ons_objects() -> None:
    result = cli("validate", str(EXAMPLE), "-q")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("valid: 1 input documents, 5 rendered objects")
