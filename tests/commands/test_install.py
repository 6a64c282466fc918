"""One install: every CLI command is there; a missing optional package is exit 2 naming the pip command, never an
internal error or a traceback."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from .test_cli import EXAMPLE, ROOT


def run_without(module: str, code: str) -> subprocess.CompletedProcess[str]:
    """Python with ``module`` unimportable (``sys.modules[module] = None`` makes ``import`` raise ImportError)."""
    prelude = f"import sys, runpy; sys.modules[{module!r}] = None; sys.path.insert(0, {str(ROOT)!r});"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def test_every_cli_dependency_is_a_main_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in project["dependencies"]}
    assert {"kubernetes", "kubernetes-validate", "typer"} <= names
    assert "onnxruntime" not in names and any(
        d.startswith("onnxruntime") for d in project["optional-dependencies"]["server"]
    )


def test_model_server_without_its_extra_says_which_pip_command() -> None:
    argv = "['server', '--model_name', 'm', '--model_dir', '/nonexistent', '--http_port', '0']"
    result = run_without("onnxruntime", f"sys.argv={argv}; runpy.run_module('server', run_name='__main__')")
    assert result.returncode == 2
    assert (
        result.stderr
        == "error: the model server needs the Python package 'onnxruntime': pip install 'kserve-compile[server]'\n"
    )


def test_validate_without_the_schema_packages_is_exit_2_with_the_pip_command() -> None:
    code = f"sys.argv=['kserve-compile', 'validate', {str(EXAMPLE)!r}]; runpy.run_path('cli.py', run_name='__main__')"
    result = run_without("jsonschema", code)
    assert result.returncode == 2, result.stderr
    assert (
        result.stderr
        == "error: the Python package 'jsonschema' is not installed; run: pip install --force-reinstall kserve-compile\n"
    )


def test_render_needs_none_of_them() -> None:
    code = (
        f"sys.argv=['kserve-compile', 'render', {str(EXAMPLE)!r}, '-q']; runpy.run_path('cli.py', run_name='__main__')"
    )
    result = run_without("kubernetes", code)
    assert result.returncode == 0 and "kind: Deployment" in result.stdout
