"""A throwaway single-node Slurm (slurmctld + slurmd + munged) under one temporary directory.

Follows shared/notes/slurm-test-cluster.md. Daemons are stopped by the PIDs in their pid files.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

BINARIES = ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo")


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None and not Path(f"/usr/sbin/{b}").exists()]


def _bin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def cluster_for_test(root: Path, monkeypatch, **kwargs):
    """A started cluster for one test (SLURM_CONF set), stopped by PID after it, failed or not.
    Missing binaries skip the test, and fail it in CI (where .ci/run installs them)."""
    import pytest

    missing = missing_binaries()
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"Slurm binaries missing in CI: {missing} (.ci/run installs them)")
    if missing:
        pytest.skip(
            f"Slurm binaries missing: {missing} (CI installs slurmctld slurmd slurm-client munge)"
        )
    cluster = SlurmCluster(root, **kwargs)
    try:
        cluster.start()
        monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
        yield cluster
    finally:
        cluster.stop()


class SlurmCluster:
    def __init__(self, root: Path, memory_mb: int = 2000, partitions: tuple[str, ...] = ("debug",)):
        self.root = Path(root)
        self.memory_mb = memory_mb
        self.partitions = partitions  # the first is the default; all on the one node
        self.conf = self.root / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.pid_files = []

    def _write_config(self):
        for sub in ("munge", "state", "spool", "run", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "munge", 0o711)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(128))
        os.chmod(key, 0o400)
        host = socket.gethostname().split(".")[0]
        d = self.root
        self.conf.write_text(
            f"""ClusterName=ocgtest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={self.memory_mb} State=UNKNOWN
"""
            + "".join(
                f"PartitionName={name} Nodes=ALL Default={'YES' if i == 0 else 'NO'} MaxTime=INFINITE State=UP\n"
                for i, name in enumerate(self.partitions)
            )
        )

    def start(self, timeout: float = 30.0) -> SlurmCluster:
        self._write_config()
        m = self.root / "munge"
        subprocess.run(
            [
                _bin("munged"),
                f"--socket={m}/munge.socket",
                f"--key-file={m}/munge.key",
                f"--log-file={m}/munged.log",
                f"--pid-file={m}/munged.pid",
                f"--seed-file={m}/munged.seed",
                "--force",
            ],
            check=True,
            env=self.env,
            capture_output=True,
        )
        self.pid_files.append(m / "munged.pid")
        subprocess.run([_bin("slurmctld")], check=True, env=self.env, capture_output=True)
        self.pid_files.append(self.root / "run" / "slurmctld.pid")
        subprocess.run([_bin("slurmd")], check=True, env=self.env, capture_output=True)
        self.pid_files.append(self.root / "run" / "slurmd.pid")
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = subprocess.run(
                ["timeout", "5", "sinfo", "-h", "-o", "%T"],
                env=self.env,
                capture_output=True,
                text=True,
            )
            if out.stdout.strip() in ("idle", "mixed", "allocated"):
                return self
            time.sleep(0.5)
        raise RuntimeError(f"slurm did not come up: {self.logs()}")

    def logs(self) -> str:
        parts = []
        for f in sorted((self.root / "log").glob("*.log")):
            parts.append(f"--- {f.name}\n{f.read_text()[-2000:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        """SIGTERM each daemon by its PID, slurmd, slurmctld, munged, waiting for each."""
        for pid_file in reversed(self.pid_files):
            try:
                pid = int(pid_file.read_text().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.time() + 15
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.pid_files.clear()
