"""A two-worker LocalCluster (separate processes, one thread each) shared by the tests of
bicrit.dask; skipped when the ``dask`` extra is not installed."""

from __future__ import annotations

import time

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


def _wait_running(client, n: int, timeout: float = 180.0) -> None:
    """Waits until the scheduler has ``n`` running workers (after a test killed one, its
    nanny's restart), asking the scheduler itself: the client's and the cluster's views
    (``scheduler_info``, ``wait_for_workers``) can lag behind for minutes on a loaded
    machine."""

    def running(dask_scheduler=None):
        return [a for a, ws in dask_scheduler.workers.items() if ws.status.name == "running"]

    deadline = time.monotonic() + timeout
    while len(client.run_on_scheduler(running)) < n:
        assert time.monotonic() < deadline, f"fewer than {n} running workers after {timeout:g} s"
        time.sleep(0.2)


@pytest.fixture
def wait_running():
    """:func:`_wait_running`, for the tests that kill a worker."""
    return _wait_running
