"""The apply-loop daemon tests (informers, leader election, reconcile, status write-back, resync) again, with the fake API server merging through structured-merge-diff.

Every test of test_apply_daemon.py runs here unchanged against ``FakeApi(oracle=...)``; skipped, with the
reason, where Go or the SMD sources are missing.
"""

from __future__ import annotations

from smd.fixtures import fake, oracle, requires_oracle  # noqa: F401  (fixtures)
from test_apply_daemon import *  # noqa: F401,F403  (re-collected here with the oracle-backed ``fake``)
from test_apply_daemon import _stop_daemons  # noqa: F401  (autouse: ends the daemons' threads; * skips it)

pytestmark = requires_oracle
