"""The apply-loop engine tests again, with the fake API server merging through structured-merge-diff.

Every test of test_apply_engine.py runs here unchanged against ``FakeApi(oracle=...)``: the cases the
engine relies on (create, unchanged → no write, drift restored, replicas left to the HPA, conflicts
naming manager and field, force, prune, immutable selector) hold under the real merge, not only
under the fake's simplified one. Skipped, with the reason, where Go or the SMD sources are missing.
"""

from __future__ import annotations

from smd.fixtures import fake, oracle, requires_oracle  # noqa: F401  (fixtures)
from test_apply_engine import *  # noqa: F401,F403  (re-collected here with the oracle-backed ``fake``)

pytestmark = requires_oracle


def test_the_engine_suite_really_ran_through_the_oracle(fake, kube, oracle):
    calls = oracle.calls
    report = Applier(kube, ApplyOptions(namespace=NS, applyset=SET)).run(isvc_set())  # noqa: F405
    assert report.ok, report.errors
    assert oracle.calls > calls
    managers = fake.find("apps", "deployments", NS, "m-predictor")["metadata"]["managedFields"]
    # keyed-list ownership only SMD produces (the simplified merge owns lists whole)
    containers = managers[0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert list(containers) == ['k:{"name":"kserve-container"}']
