"""A stopped notebook run leaves no inference server behind: the kernel stops the server it started
(its own process group, SIGTERM then SIGKILL after generation/server.py's grace), so the runner
must give the kernel longer than that before its SIGKILL (a judge server was found orphaned)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ocg.jobs.notebook_runner import _alive, _stop_groups

pytestmark = pytest.mark.slow

# A "kernel": starts a "server" in a session of its own that ignores SIGTERM (as uvicorn may,
# finishing requests in flight), and on SIGTERM stops it as a run does, through server._stop.
KERNEL = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    from ocg.generation.servers.server import _stop
    server = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        start_new_session=True)
    print(server.pid, flush=True)
    def stop(*_):
        _stop(server)
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    time.sleep(600)
    """
)


def test_a_stopped_kernel_stops_its_server_before_it_is_killed():
    kernel = subprocess.Popen(
        [sys.executable, "-c", KERNEL], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    server = int(kernel.stdout.readline())
    try:
        time.sleep(0.5)  # the handler is installed
        _stop_groups([kernel.pid])
        kernel.wait(timeout=5)
        assert kernel.returncode == 0, "the kernel was killed before it stopped its server"
        assert not _alive(server), "the server outlived the stopped kernel"
    finally:
        for group in (kernel.pid, server):
            if _alive(group):
                os.killpg(group, signal.SIGKILL)
