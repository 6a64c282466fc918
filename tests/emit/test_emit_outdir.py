"""``--output-dir``: file per object, kustomization, ownership checks, atomic replacement."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from kserve_compile.emit import (
    OUTPUT_DIR_MARKER,
    dump_yaml,
    object_file_name,
    outdir,
    sort_objects,
    write_output_dir,
)
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


def test_one_file_per_object_in_apply_order(tmp_path: Path) -> None:
    objs = rendered(1)
    paths = write_output_dir(objs, tmp_path / "out")
    names = [p.name for p in paths]
    assert names == [
        "001-namespace-default.yaml",
        "002-service-default-model-0000-predictor.yaml",
        "003-deployment-default-model-0000-predictor.yaml",
        "004-horizontalpodautoscaler-default-model-0000-predictor.yaml",
        "005-ingress-default-model-0000.yaml",
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


def test_file_names_are_lower_case_safe_and_bounded() -> None:
    odd = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}
    odd["metadata"] = {"name": "System:Auth/X_y"}
    assert object_file_name(7, odd) == "007-clusterrole-system-auth-x-y.yaml"
    long = {"kind": "ConfigMap", "metadata": {"namespace": "n" * 63, "name": "a" * 253}}
    name = object_file_name(1, long, width=4)
    assert name.startswith("0001-configmap-nnn") and len(name) <= 205
    assert object_file_name(3, {}) == "003.yaml"


def test_width_grows_with_the_number_of_objects(tmp_path: Path) -> None:
    objs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(1000)]
    paths = write_output_dir(objs, tmp_path / "out")
    assert paths[0].name == "0001-configmap-c0.yaml" and paths[999].name == "1000-configmap-c999.yaml"


def test_kubectl_kustomize_rebuilds_the_same_objects(tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl must be on PATH (it is in CI and on the dev machine)"
    hazard_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hazards", "namespace": "default", "labels": {"enabled": "on", "mode": "0755"}},
        "data": {
            f"k{i:03d}": s for i, s in enumerate(HAZARDS + PLAIN) if not _KUSTOMIZE_CANNOT_REEMIT.search(s)
        },
    }
    objs = sort_objects(rendered(3) + [hazard_cm])
    write_output_dir(objs, tmp_path / "out")
    done = subprocess.run(
        [kubectl, "kustomize", str(tmp_path / "out")],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # kustomize writes the YAML 1.2 core schema (it leaves "<<" and timestamps plain).
    assert core12_all(done.stdout) == objs  # same objects, same order (sortOptions: fifo)


# kustomize reads these from our files correctly but writes them raw into its own output, which
# it (DEL, C1, U+FFFE) or YAML 1.1 readers (U+0085, U+2028/9 are line breaks there) then misread.
# test_hazards_read_back_through_kubectl_yaml_1_1_decoder covers them through kubectl's decoder.
_KUSTOMIZE_CANNOT_REEMIT = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff\ud800-\udfff]")


def test_rewriting_our_directory_leaves_no_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output_dir(rendered(3), out)
    assert len(listing(out)) == 14
    paths = write_output_dir(rendered(1), out)
    assert listing(out) == sorted(p.name for p in paths)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary siblings left


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


def test_refuses_a_directory_we_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    refused = f"refusing to replace --output-dir {out}: .*not written by kserve-compile"
    with pytest.raises(UsageError, match=refused):
        write_output_dir(rendered(1), out)
    assert listing(out) == ["notes.txt"]
    (out / "kustomization.yaml").write_text("resources: [notes.txt]\n")  # a kustomization, but not ours
    with pytest.raises(UsageError, match="not written by kserve-compile"):
        write_output_dir(rendered(1), out)
    assert listing(tmp_path) == ["mine"]


def test_refuses_our_directory_when_someone_added_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output_dir(rendered(1), out)
    (out / "README.md").write_text("hand-written")
    before = listing(out)
    with pytest.raises(UsageError, match="holds 'README.md', which kserve-compile did not write"):
        write_output_dir(rendered(2), out)
    assert listing(out) == before


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


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "rename-aside"])
def test_replacement_with_and_without_atomic_exchange(tmp_path: Path, monkeypatch, exchange: bool) -> None:
    if not exchange:
        monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    write_output_dir(rendered(2), out)
    inode_before = out.stat().st_ino
    paths = write_output_dir(rendered(1), out)
    assert listing(out) == sorted(p.name for p in paths)
    assert out.stat().st_ino != inode_before  # a new directory was swapped in, not edited in place
    assert listing(tmp_path) == ["out"]


def test_atomic_exchange_is_used_on_linux(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from-a").touch()
    assert outdir._exchange(a, b) is True
    assert listing(b) == ["from-a"] and listing(a) == []
