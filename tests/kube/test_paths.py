"""``find_common_parent_path``: KServe's ``FindCommonParentPath`` (pkg/utils/storage.go) and its callers."""

from __future__ import annotations

import pytest

from kserve_compile.errors import InputError
from kserve_compile.kube.paths import CommonParentPanic, find_common_parent_path
from kserve_compile.plan.admission import storage_uris_problem


# Ported from kserve/kserve pkg/utils/storage_test.go, TestFindCommonParentPath (its scenarios map, by name).
@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        pytest.param([], "", id="EmptyPaths"),
        pytest.param(["/mnt/models"], "/mnt/models", id="SinglePath"),
        pytest.param(["/mnt/models/model1", "/mnt/models/model2"], "/mnt/models", id="CommonParent"),
        pytest.param(["/mnt/models", "/opt/models"], "/", id="DifferentRoots"),
        pytest.param(
            ["/mnt/models/pytorch/model1", "/mnt/models/pytorch/model2", "/mnt/models/pytorch/"],
            "/mnt/models/pytorch",
            id="NestedCommonParent",
        ),
        pytest.param(["/mnt/models", "/opt/data", "/var/cache"], "/", id="NoCommonParent"),
    ],
)
def test_kserve_find_common_parent_path_scenarios(paths: list[str], expected: str) -> None:
    assert find_common_parent_path(paths) == expected


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["/"], "/"),  # one path is returned as given ...
        (["/mnt/models/"], "/mnt/models/"),  # ... not cleaned
        (["relative/x"], "relative/x"),
        (["/a/bc", "/a/bd"], "/a"),  # a shared prefix that is not a whole component does not count
        (["/abc", "/abd"], "/"),
        (["/a/b/", "/a/b"], "/a/b"),  # trailing slashes are trimmed before splitting
        (["//a//b", "/a/"], "/a"),  # every leading/trailing slash goes; an inner empty component stays one
        (["/a//b", "/a//c"], "/a/"),  # Go joins the shared empty component back: "/" + "a/" (not cleaned)
        (["/mnt/models/x", "/mnt/models"], "/mnt/models"),  # one path a prefix of the other
        (["/x", "/x", "/x"], "/x"),
        (["/", "/"], "/"),  # every path trims to nothing: Go's minLength stays -1, no common component
        (["/", "//", ""], "/"),
    ],
)
def test_edge_cases_follow_go(paths: list[str], expected: str) -> None:
    assert find_common_parent_path(paths) == expected


@pytest.mark.parametrize("paths", [["/", "/a"], ["/a", "//"], ["/a/b", "/a/c", ""]])
def test_a_root_path_next_to_others_is_kserves_panic(paths: list[str]) -> None:
    # Go indexes the empty component list of the root path: index out of range [0] with length 0.
    with pytest.raises(CommonParentPanic) as info:
        find_common_parent_path(paths)
    assert info.value.path in ("/", "//", "")
    assert "index out of range" in str(info.value)


class _Entry:
    def __init__(self, uri: str, mount_path: str) -> None:
        self.uri = uri
        self.mount_path = mount_path


def test_admission_names_the_entry_kserve_would_panic_on() -> None:
    # "/" itself is rejected before (storage path cannot be empty); "//" reaches FindCommonParentPath.
    entries = [_Entry("gs://b/1", "/mnt/a"), _Entry("gs://b/2", "//")]
    with pytest.raises(InputError) as info:
        storage_uris_problem(entries, "spec.predictor.storageUris")  # type: ignore[arg-type]
    assert info.value.path == "spec.predictor.storageUris[1].mountPath"
    assert info.value.message.startswith("storage path // has no directory components")


def test_admission_keeps_kserves_no_common_parent_message() -> None:
    entries = [_Entry("gs://b/1", "/a/bc"), _Entry("gs://b/2", "/b/bd")]
    with pytest.raises(InputError, match=r"Current paths: \[/a/bc /b/bd\] have no common parent beyond root"):
        storage_uris_problem(entries, "spec.predictor.storageUris")  # type: ignore[arg-type]
    storage_uris_problem([_Entry("gs://b/1", "/a/bc"), _Entry("gs://b/2", "/a/bd")], "p")  # type: ignore[arg-type]
