"""Work over forked worker processes, started now and collected later, for scoring's slow
family (coverage): each worker inherits the parent's loaded state (nothing is loaded twice),
dies with the parent, and multiplies on one BLAS thread.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

_state: object = None  # the job's state while its workers fork: they inherit it


def _run(work, chunk: list) -> list:
    return work(_state, chunk)


def _init_worker(parent: int) -> None:
    """In a worker: die with the parent (Linux: a killed scoring leaves no workers behind), and
    multiply on one BLAS thread, since the processes share the CPUs."""
    import ctypes
    import signal

    from threadpoolctl import threadpool_limits

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    threadpool_limits(1)


class ForkedJob:
    """work(state, items), started now and collected by `result()`: over `n_process` forked
    workers where the platform forks and each gets at least `min_per_process` items (each
    inherits `state`; the caller goes on with other work meanwhile), else here, when the result
    is asked for. `work` is a module-level function returning one output per item, in order. A
    worker that dies (killed, out of memory) fails the job with BrokenProcessPool, never hangs it."""

    def __init__(
        self, work, items: list, n_process: int, state: object = None, min_per_process: int = 1
    ):
        global _state
        self.work, self.items, self.state = work, items, state
        self.pool, self.futures = None, []
        n_process = min(n_process, len(items) // min_per_process)
        if n_process > 1 and sys.platform.startswith("linux"):  # fork is safe on Linux, not macOS
            size = -(-len(items) // (4 * n_process))  # a few chunks per worker even out their loads
            _state = state
            try:  # with fork, all workers start at the first submit, here, before anything else
                self.pool = ProcessPoolExecutor(
                    n_process,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_init_worker,
                    initargs=(os.getpid(),),
                )
                self.futures = [
                    self.pool.submit(_run, work, items[i : i + size])
                    for i in range(0, len(items), size)
                ]
            finally:
                _state = None

    def result(self) -> list:
        if self.pool is None:
            return self.work(self.state, self.items)
        try:
            return [out for future in self.futures for out in future.result()]
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers now (also mid-job, when scoring fails or is interrupted)."""
        if self.pool is not None:
            processes = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:
                proc.terminate()
            for proc in processes:
                proc.join()
            self.pool = None
