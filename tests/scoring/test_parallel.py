"""The forked worker pool of scoring (ocg/core/parallel.py): results in order, whether forked or not;
a dead worker fails the job; killed parents leave no workers."""

import pytest


def _square(state, items):
    return [state * i for i in items]


def test_results_come_back_in_order_forked_or_not():
    from ocg.core.parallel import ForkedJob

    items = list(range(40))
    here = ForkedJob(_square, items, 1, state=3)
    forked = ForkedJob(_square, items, 2, state=3, min_per_process=10)
    assert here.pool is None and forked.pool is not None
    assert here.result() == forked.result() == [3 * i for i in items]
    assert forked.pool is None  # closed after its result
    assert (
        ForkedJob(_square, items, 2, state=3, min_per_process=30).pool is None
    )  # too few items for two


def _die(state, items):
    import os

    os._exit(3)  # as a worker killed for memory would


def test_a_dead_worker_fails_scoring_instead_of_hanging():
    from concurrent.futures.process import BrokenProcessPool

    from ocg.core.parallel import ForkedJob

    job = ForkedJob(_die, ["a", "b", "c", "d"], 2)
    with pytest.raises(BrokenProcessPool):
        job.result()
    assert job.pool is None  # closed


def test_workers_die_with_a_killed_scoring_process(tmp_path):
    """kill -9 of the scoring process (a cancelled job, an OOM kill) leaves no worker running."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text(
        "import time\nfrom ocg.core.parallel import ForkedJob\n"
        "def slow(state, items):\n    time.sleep(120)\n    return items\n"
        "job = ForkedJob(slow, [1, 2, 3, 4], 2)\n"
        "time.sleep(1)\nprint(' '.join(map(str, job.pool._processes)), flush=True)\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert len(workers) == 2

    def alive(pid):
        try:
            with open(f"/proc/{pid}/status") as fh:
                return "\nState:\tZ" not in fh.read()
        except FileNotFoundError:
            return False

    assert all(alive(p) for p in workers)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 15
    while any(alive(p) for p in workers) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in workers)
