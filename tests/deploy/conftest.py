"""The deployment suite: deploy/run-local.sh (Redis, replicas, HAProxy) on free loopback ports.

Tests that start the topology ask for ``deploy_tools``: without haproxy or redis-server
on PATH they are skipped with the reason, unless ``REQUIRE_DEPLOY=1`` (CI, through
``.ci/run``), where that is a failure.
"""

from __future__ import annotations

import os

import pytest

from benchmarks import deployment


@pytest.fixture(scope="session")
def deploy_tools() -> None:
    missing = deployment.missing_tools()
    if not missing:
        return
    reason = f"{', '.join(missing)} not found (Debian: apt-get install haproxy redis-server)"
    if os.environ.get("REQUIRE_DEPLOY") == "1":
        pytest.fail(f"REQUIRE_DEPLOY=1 but {reason}", pytrace=False)
    pytest.skip(reason)
