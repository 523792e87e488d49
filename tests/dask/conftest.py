"""A two-worker LocalCluster (separate processes, one thread each) shared by the tests of
bicrit.dask; skipped when the ``dask`` extra is not installed."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed", reason="bicrit[dask] is not installed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
    ) as c:
        yield c


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c
