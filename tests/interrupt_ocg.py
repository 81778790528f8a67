"""Run `ocg ARGS...` and stop it at a file write: `interrupt_ocg.py N ARGS...` kills itself with
SIGKILL right after its N-th os.replace (the last step of every atomic write; N=0: right before
the first, leaving its temporary file); `interrupt_ocg.py pause ARGS...` prints "paused" and
waits at its first os.replace instead (a scorer caught mid-run); `interrupt_ocg.py fsync:N ARGS...`
kills itself right after its N-th os.fsync (a generation store appends each batch with one);
any other word: runs as is."""

import os
import signal
import sys
import time

from ocg.cli import main

when, real_replace, replaced = sys.argv[1], os.replace, [0]


def replace(src, dst):
    if when == "pause":
        print("paused", flush=True)
        time.sleep(600)
    if when == "0":
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(src, dst)
    replaced[0] += 1
    if str(replaced[0]) == when:
        os.kill(os.getpid(), signal.SIGKILL)


real_fsync, synced = os.fsync, [0]


def fsync(fd):
    real_fsync(fd)
    synced[0] += 1
    if when == f"fsync:{synced[0]}":
        os.kill(os.getpid(), signal.SIGKILL)


os.replace = replace
os.fsync = fsync
sys.exit(main(sys.argv[2:]))
