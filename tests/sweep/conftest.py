"""The `slurm` fixture: a throwaway Slurm cluster for one test (tests/slurm_cluster.py); the top
conftest keeps the tests that use it in one process."""

import pytest

from tests.slurm_cluster import cluster_for_test


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    yield from cluster_for_test(tmp_path / "cluster", monkeypatch)
