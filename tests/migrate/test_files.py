"""Whole files: the legacy fixtures migrate to their reviewed form, untouched documents keep their bytes, a second
migrate changes nothing, the JSON patches reproduce the migrated objects, and ``render`` of a migrated input is
byte-identical to ``render`` of the original — over every golden scenario and the legacy fixtures."""

from __future__ import annotations

from pathlib import Path

import jsonpatch
import pytest

from kserve_compile.api import render_files
from kserve_compile.emit import dump_yaml
from kserve_compile.inputs.parse import parse_text
from kserve_compile.migrate import migrate_paths, migrate_text
from kserve_compile.migrate.roundtrip import split_documents

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE.parent.parent / "golden"
SCENARIOS = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())
CONFIG = str(FIXTURES / "config-standard.yaml")

# fixture → the --config it is migrated and rendered with
LEGACY = {"legacy-frameworks": None, "legacy-components": CONFIG}
CASES = [(str(GOLDEN / name / "input.yaml"), None) for name in SCENARIOS] + [
    (str(FIXTURES / f"{name}.yaml"), config) for name, config in LEGACY.items()
]
IDS = SCENARIOS + list(LEGACY)


@pytest.mark.parametrize(("name", "config"), LEGACY.items())
def test_legacy_fixtures_migrate_to_their_reviewed_form(name: str, config: str | None):
    result = migrate_paths([str(FIXTURES / f"{name}.yaml")], config)
    assert result.files[0].new_text == (FIXTURES / f"{name}.migrated.yaml").read_text()


def test_documents_no_rule_changes_keep_their_bytes():
    path = FIXTURES / "legacy-frameworks.yaml"
    text = path.read_text()
    before, after = split_documents(text), split_documents(migrate_paths([str(path)]).files[0].new_text)
    assert len(before) == len(after) == 4
    assert [b.marker + b.body == a.marker + a.body for b, a in zip(before, after, strict=True)] == [
        True,
        False,
        False,
        True,
    ]


def test_other_kinds_between_isvcs_keep_their_bytes():
    other = "apiVersion: v1\nkind: Service\nmetadata: {name: s}   # odd  spacing\nspec:\n    ports: [ {port: 80} ]\n"
    isvc = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\nspec:\n  predictor:\n    sklearn: {storageUri: gs://b/m}\n"
    text = f"---\n{other}---\n{isvc}--- # trailing\n{other}"
    new = migrate_paths([_write(text)]).files[0].new_text
    migrated = isvc.replace("metadata: {name: m}", "metadata: {name: m, annotations: {modelFormat: sklearn}}").replace(
        "sklearn: {storageUri: gs://b/m}", "model: {modelFormat: {name: sklearn}, storageUri: gs://b/m}"
    )  # flow style stays flow
    assert new == f"---\n{other}---\n{migrated}--- # trailing\n{other}"


@pytest.mark.parametrize(("path", "config"), CASES, ids=IDS)
def test_migrating_twice_is_migrating_once(path: str, config: str | None, tmp_path: Path):
    once = migrate_paths([path], config).files[0]
    again = migrate_paths([_write(once.new_text, tmp_path)], config).files[0]
    assert again.new_text == once.new_text
    assert again.objects == []


@pytest.mark.parametrize(("path", "config"), CASES, ids=IDS)
def test_json_patches_turn_each_object_into_its_migrated_form(path: str, config: str | None):
    fm = migrate_paths([path], config).files[0]
    migrated = [d.data for d in parse_text(fm.new_text, fm.file)]
    for obj in fm.objects:
        assert jsonpatch.apply_patch(obj.before, obj.json_patch()) == migrated[obj.index] == obj.after


@pytest.mark.parametrize(("path", "config"), CASES, ids=IDS)
def test_render_of_the_migrated_input_is_byte_identical(path: str, config: str | None, tmp_path: Path):
    fm = migrate_paths([path], config).files[0]
    if path.startswith(str(FIXTURES)):
        assert fm.changed  # the legacy fixtures are there to be changed
    if not fm.changed:
        return
    assert dump_yaml(render_files([_write(fm.new_text, tmp_path)], config)) == dump_yaml(render_files([path], config))


def test_enough_golden_scenarios_change():
    """The render check above is only worth something if migrate changes many scenarios, of several rules."""
    changed = [migrate_paths([p], c).files[0] for p, c in CASES]
    rules = {ch.rule for fm in changed for o in fm.objects for ch in o.changes}
    assert sum(fm.changed for fm in changed) >= 40
    assert rules >= {
        "deployment-mode-name",
        "deployment-mode-default",
        "framework-to-model",
        "model-protocol-v2",
        "model-format-annotation",
        "custom-container-name",
        "custom-container-resources",
        "art-explainer-defaults",
        "automount-service-account-token",
    }


def test_crlf_files_stay_crlf():
    text = (
        "apiVersion: serving.kserve.io/v1beta1\r\nkind: InferenceService\r\nmetadata:\r\n  name: m\r\n"
        "  annotations:\r\n    serving.kserve.io/deploymentMode: Serverless\r\n"
    )
    new = migrate_text(text, "w.yaml", _shipped()).new_text
    assert new == text.replace("Serverless", "Knative")


def _shipped():
    from kserve_compile.inputs.config import parse_config
    from kserve_compile.inputs.defaults import embedded_configmap
    from kserve_compile.migrate.rules import Settings

    return Settings.from_config(parse_config(embedded_configmap()["data"]))


def _write(text: str, folder: Path | None = None) -> str:
    import tempfile

    folder = folder or Path(tempfile.mkdtemp())
    path = folder / "input.yaml"
    path.write_text(text, newline="")
    return str(path)


def test_json_files_are_rewritten_as_json_with_their_indentation():
    text = (
        '{\n  "apiVersion": "serving.kserve.io/v1beta1",\n  "kind": "InferenceService",\n  "metadata": {"name": "j"},\n'
        '  "spec": {"predictor": {"sklearn": {"storageUri": "gs://a/b"}}}\n}\n'
    )
    fm = migrate_text(text, "j.json", _shipped())
    assert fm.new_text == (
        '{\n  "apiVersion": "serving.kserve.io/v1beta1",\n  "kind": "InferenceService",\n  "metadata": {\n    "name": "j",\n'
        '    "annotations": {\n      "modelFormat": "sklearn"\n    }\n  },\n  "spec": {\n    "predictor": {\n      "model": {\n'
        '        "modelFormat": {\n          "name": "sklearn"\n        },\n        "storageUri": "gs://a/b"\n      }\n    }\n  }\n}\n'
    )
    assert migrate_text(fm.new_text, "j.json", _shipped()).new_text == fm.new_text


def test_local_model_labels_are_kept_with_a_warning(tmp_path: Path):
    text = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: m\n  labels:\n"
        "    internal.serving.kserve.io/localmodel: cache\nspec:\n  predictor:\n    model:\n"
        "      modelFormat: {name: sklearn}\n      storageUri: gs://b/m\n"
    )
    result = migrate_paths([_write(text, tmp_path)])
    assert "internal.serving.kserve.io/localmodel: cache\n" in result.files[0].new_text
    [warning] = result.warnings
    assert warning.severity == "warning"
    assert warning.format().startswith(
        f"{tmp_path}/input.yaml:6:5: InferenceService/m: metadata.labels[internal.serving.kserve.io/localmodel]: warning: left as is:"
    )


def test_each_change_is_one_field_with_its_rule():
    text = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\n"
        "spec:\n  predictor:\n    sklearn: {storageUri: gs://b/m}\n"
    )
    [obj] = migrate_text(text, "x.yaml", _shipped()).objects
    assert [(c.rule, c.op, c.path, c.value, c.from_path) for c in obj.changes] == [
        ("framework-to-model", "move", "spec.predictor.model", None, "spec.predictor.sklearn"),
        ("framework-to-model", "add", "spec.predictor.model.modelFormat", {"name": "sklearn"}, ""),
        ("model-format-annotation", "add", "metadata.annotations.modelFormat", "sklearn", ""),
    ]


ISVC = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\nspec:\n  predictor:\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # a %YAML directive and a `...` end line stay where they were
        (
            f"%YAML 1.1\n---\n{ISVC}    sklearn: {{storageUri: a}}\n...\n# done\n",
            f"%YAML 1.1\n---\n{ISVC}    model: {{modelFormat: {{name: sklearn}}, storageUri: a}}\n...\n# done\n",
        ),
        # an anchor nothing refers to is the user's: ruamel would drop it
        (
            f"{ISVC}    sklearn: &legacy\n      storageUri: a\n",
            f"{ISVC}    model: &legacy\n      modelFormat:\n        name: sklearn\n      storageUri: a\n",
        ),
        # YAML 1.1 scalars the rules do not touch keep their text (and so their meaning)
        (
            f"{ISVC}    sklearn: {{storageUri: a, args: [on, 0755, 1e3, no]}}\n",
            f"{ISVC}    model: {{modelFormat: {{name: sklearn}}, storageUri: a, args: [on, 0755, 1e3, no]}}\n",
        ),
        # no newline at the end of the file: none added
        (
            f"{ISVC}    sklearn: {{storageUri: a}}",
            f"{ISVC}    model: {{modelFormat: {{name: sklearn}}, storageUri: a}}",
        ),
    ],
)
def test_yaml_details_survive_the_round_trip(before: str, after: str):
    annotated = after.replace("metadata: {name: m}", "metadata: {name: m, annotations: {modelFormat: sklearn}}")
    assert migrate_text(before, "x.yaml", _shipped()).new_text == annotated


def test_a_round_trip_that_would_change_other_fields_is_refused():
    from kserve_compile.errors import CompileError
    from kserve_compile.migrate.roundtrip import verify

    expected = {"kind": "X", "metadata": {"name": "n"}, "a": 1}
    verify("kind: X\nmetadata: {name: n}\na: 1\n", expected, "x.yaml", (1, 1))
    with pytest.raises(CompileError, match=r"x.yaml:3:1: X/n: cannot rewrite this document without changing fields"):
        verify("kind: X\nmetadata: {name: n}\na: '1'\n", expected, "x.yaml", (3, 1))
