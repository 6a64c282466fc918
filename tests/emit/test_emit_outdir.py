"""``--output-dir``: a file per object named after it, the kustomization, ownership, --check, staged writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from kserve_compile.emit import dump_yaml, sort_objects
from kserve_compile.emit.outdir import OUTPUT_DIR_MARKER, object_file_name, output_dir_changes, write_output_dir
from kserve_compile.errors import UsageError

from .hazards import HAZARDS, PLAIN
from .readback import core12_all, pyyaml_all
from .shapes import isvc_objects


def rendered(n: int = 2) -> list[dict]:
    objs = [o for i in range(n) for o in isvc_objects(i, namespace="default")]
    objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    return sort_objects(objs)


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def test_one_file_per_object_named_after_the_object(tmp_path: Path) -> None:
    objs = rendered(1)
    paths = write_output_dir(objs, tmp_path / "out")
    names = [p.name for p in paths]
    assert names == [
        "namespace_default.yaml",
        "service_default_model-0000-predictor.yaml",
        "deployment.apps_default_model-0000-predictor.yaml",
        "horizontalpodautoscaler.autoscaling_default_model-0000-predictor.yaml",
        "ingress.networking.k8s.io_default_model-0000.yaml",
        "kustomization.yaml",
    ]
    assert all(p.parent == tmp_path / "out" for p in paths)
    assert listing(tmp_path / "out") == sorted(names)
    for path, obj in zip(paths, objs):
        text = path.read_text(encoding="utf-8")
        assert text.startswith(OUTPUT_DIR_MARKER)
        assert text.endswith(dump_yaml([obj]))
        assert pyyaml_all(text) == [obj]


def test_kustomization_lists_files_in_apply_order(tmp_path: Path) -> None:
    paths = write_output_dir(rendered(1), tmp_path / "out")
    text = paths[-1].read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith(OUTPUT_DIR_MARKER)
    doc = yaml.safe_load(text)
    assert doc == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [p.name for p in paths[:-1]],
        "sortOptions": {"order": "fifo"},
    }


def test_file_names_are_lower_case_safe_unique_and_bounded() -> None:
    odd = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "System:Auth/X_y"}}
    name = object_file_name(odd)
    assert re.fullmatch(r"clusterrole\.rbac\.authorization\.k8s\.io_system-auth-x-y-[0-9a-f]{8}\.yaml", name)
    other = {**odd, "metadata": {"name": "system-auth-x-y"}}
    assert object_file_name(other) == "clusterrole.rbac.authorization.k8s.io_system-auth-x-y.yaml" != name
    long = {"kind": "ConfigMap", "metadata": {"namespace": "n" * 63, "name": "a" * 253}}
    assert object_file_name(long).startswith("configmap_nnn") and len(object_file_name(long)) <= 214
    assert object_file_name({}) == "object.yaml"
    # Knative's Service and the core Service of the same name do not collide
    knative = {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"namespace": "ns", "name": "m"}}
    core = {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "ns", "name": "m"}}
    assert object_file_name(knative) == "service.serving.knative.dev_ns_m.yaml"
    assert object_file_name(core) == "service_ns_m.yaml"


def test_adding_an_object_touches_only_its_own_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output_dir(rendered(2), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    extra = isvc_objects(99, namespace="aaa")  # sorts first by namespace
    changes = output_dir_changes(sort_objects(rendered(2) + extra), out)
    assert changes.changed == ["kustomization.yaml"] and changes.removed == []
    assert sorted(changes.added) == sorted(object_file_name(o) for o in extra)
    write_output_dir(sort_objects(rendered(2) + extra), out)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {n: b for n, b in after.items() if n in before and n != "kustomization.yaml"} == {
        n: b for n, b in before.items() if n != "kustomization.yaml"
    }


def test_duplicate_objects_are_refused() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    with pytest.raises(
        UsageError, match="v1/ConfigMap/n/c and v1/ConfigMap/n/c would both be written to configmap_n_c.yaml"
    ):
        write_output_dir([cm, dict(cm)], "/nonexistent/never-written")


def test_kubectl_kustomize_rebuilds_the_same_objects(tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl must be on PATH (it is in CI and on the dev machine)"
    hazard_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hazards", "namespace": "default", "labels": {"enabled": "on", "mode": "0755"}},
        "data": {f"k{i:03d}": s for i, s in enumerate(HAZARDS + PLAIN) if not _KUSTOMIZE_CANNOT_REEMIT.search(s)},
    }
    objs = sort_objects(rendered(3) + [hazard_cm])
    write_output_dir(objs, tmp_path / "out")
    done = subprocess.run(
        [kubectl, "kustomize", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # kustomize writes the YAML 1.2 core schema (it leaves "<<" and timestamps plain).
    assert core12_all(done.stdout) == objs  # same objects, same order (sortOptions: fifo)


# kustomize reads these from our files correctly but writes them raw into its own output, which
# it (DEL, C1, U+FFFE) or YAML 1.1 readers (U+0085, U+2028/9 are line breaks there) then misread.
# test_hazards_read_back_through_kubectl_yaml_1_1_decoder covers them through kubectl's decoder.
_KUSTOMIZE_CANNOT_REEMIT = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff\ud800-\udfff]")


def test_rewriting_removes_only_files_we_wrote_earlier(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output_dir(rendered(3), out)
    assert len(listing(out)) == 14
    (out / "README.md").write_text("hand-written")
    (out / ".gitkeep").write_text("")
    paths = write_output_dir(rendered(1), out)
    assert listing(out) == sorted([p.name for p in paths] + ["README.md", ".gitkeep"])
    assert (out / "README.md").read_text() == "hand-written"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary siblings left


def test_temporary_files_of_an_interrupted_run_are_cleaned_up(tmp_path: Path) -> None:
    out = tmp_path / "out"
    paths = write_output_dir(rendered(1), out)
    (out / f".{paths[0].name}.kserve-compile-tmp-0123abcd").write_text("half")
    write_output_dir(rendered(1), out)
    assert listing(out) == sorted(p.name for p in paths)


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    paths = write_output_dir(rendered(1), out)
    inodes = {p.name: p.stat().st_ino for p in paths}
    assert not output_dir_changes(rendered(1), out).stale
    write_output_dir(rendered(1), out)
    assert {p.name: p.stat().st_ino for p in paths} == inodes


def test_check_lists_added_changed_and_removed_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output_dir(rendered(2), out)
    objs = rendered(1)
    objs[1] = {**objs[1], "metadata": {**objs[1]["metadata"], "labels": {"x": "y"}}}
    changes = output_dir_changes(objs, out)
    assert changes.added == []
    assert changes.changed == ["kustomization.yaml", object_file_name(objs[1])]
    assert len(changes.removed) == 4 and all("model-0001" in n for n in changes.removed)
    assert changes.lines()[0] == "changed: kustomization.yaml"
    assert "kustomization.yaml" in output_dir_changes(objs, tmp_path / "new").added
    assert not (tmp_path / "new").exists()


def test_same_objects_give_byte_identical_directories(tmp_path: Path) -> None:
    a = write_output_dir(rendered(2), tmp_path / "a")
    b = write_output_dir(sort_objects(list(reversed(rendered(2)))), tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_empty_directory_and_nested_new_directory_are_fine(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write_output_dir(rendered(1), tmp_path / "empty")
    write_output_dir(rendered(1), tmp_path / "x" / "y" / "z")
    assert "kustomization.yaml" in listing(tmp_path / "x" / "y" / "z")


def test_no_objects_write_an_empty_kustomization(tmp_path: Path) -> None:
    [path] = write_output_dir([], tmp_path / "out")
    assert yaml.safe_load(path.read_text())["resources"] == []


def test_refuses_a_kustomization_we_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "kustomization.yaml").write_text("resources: [notes.txt]\n")
    with pytest.raises(UsageError, match="its kustomization.yaml was not written by kserve-compile"):
        write_output_dir(rendered(1), out)
    assert listing(out) == ["kustomization.yaml"]


def test_refuses_to_overwrite_a_file_we_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    name = object_file_name(rendered(1)[1])
    (out / name).write_text("hand-written")
    with pytest.raises(
        UsageError, match=f"refusing to overwrite '{name}' in --output-dir {out}: kserve-compile did not write it"
    ):
        write_output_dir(rendered(1), out)
    assert listing(out) == [name] and (out / name).read_text() == "hand-written"


def test_a_listed_file_that_lost_its_marker_is_not_ours(tmp_path: Path) -> None:
    out = tmp_path / "out"
    paths = write_output_dir(rendered(1), out)
    paths[1].write_text("edited by hand")
    with pytest.raises(UsageError, match="kserve-compile did not write it"):
        write_output_dir(rendered(1), out)
    assert paths[1].read_text() == "edited by hand"


def test_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    with pytest.raises(UsageError, match=f"--output-dir {tmp_path / 'out'}: exists and is not a directory"):
        write_output_dir(rendered(1), tmp_path / "out")


def test_a_symlink_to_our_directory_keeps_pointing_at_the_new_render(tmp_path: Path) -> None:
    write_output_dir(rendered(2), tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    paths = write_output_dir(rendered(1), tmp_path / "link")
    assert (tmp_path / "link").is_symlink()
    assert listing(tmp_path / "real") == sorted(p.name for p in paths)
    assert paths[0].parent == tmp_path / "link"


def test_failure_while_writing_leaves_the_previous_render(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "out"
    first = write_output_dir(rendered(1), out)
    before = {p.name: p.read_bytes() for p in first}
    real_write_text = Path.write_text
    calls = []

    def failing_write_text(self: Path, *args, **kwargs):
        calls.append(self)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing_write_text)
    with pytest.raises(UsageError, match=f"--output-dir {out}: cannot write: No space left on device"):
        write_output_dir(rendered(2), out)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert listing(tmp_path) == ["out"]


def test_bad_object_fails_before_touching_the_disk(tmp_path: Path) -> None:
    bad = rendered(1) + [{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": float("nan")}}]
    with pytest.raises(ValueError, match="Pod/p: spec.x"):
        write_output_dir(bad, tmp_path / "out")
    assert listing(tmp_path) == []
