"""Every result names the CPU its floats were computed on and the kernels torch, MKL and oneDNN
picked there (core/provenance.py: cpu_kernels): the vector width decides the order of a sum."""

import json
import os
import subprocess
import sys

import pytest

from ocg.core.provenance import KERNEL_VARIABLES, provenance

READ = "import json, sys; {imp}from ocg.core.provenance import cpu_kernels; print(json.dumps(cpu_kernels()))"


def _in_child(env_caps: dict, import_torch: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES}
    code = READ.format(imp="import torch; " if import_torch else "")
    done = subprocess.run(
        [sys.executable, "-c", code], env={**env, **env_caps}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_cpu_block_is_in_every_provenance_and_lists_only_vector_flags():
    cpu = provenance()["cpu"]
    assert {"name", "vector_extensions", "torch_kernels", "kernel_caps"} <= set(cpu)
    assert all(cpu[k] is not None for k in cpu) or cpu["missing_reason"]
    flags = set()
    try:
        text = open("/proc/cpuinfo").read().split("\n\n")[0]
    except OSError:
        pytest.skip("no /proc/cpuinfo on this system")  # not Linux: the name only
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags = set(line.partition(":")[2].split())
    assert set(cpu["vector_extensions"]) <= flags
    assert cpu["vector_extensions"] == sorted(cpu["vector_extensions"])
    assert all(
        f.startswith(("avx", "amx", "fma", "f16c", "sse4", "neon", "asimd", "sve"))
        for f in cpu["vector_extensions"]
    )


def test_torchs_kernel_level_is_read_where_torch_is_loaded_and_a_cap_is_named():
    native = _in_child({}, import_torch=True)
    assert native["torch_kernels"] and native["kernel_caps"] == {}
    capped = _in_child({"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}, True)
    assert capped["torch_kernels"] == "DEFAULT"
    assert capped["kernel_caps"] == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
    assert capped["vector_extensions"] == native["vector_extensions"]  # the CPU is the same


def test_torch_is_never_imported_to_say_it_and_its_null_says_why():
    cpu = _in_child({}, import_torch=False)
    assert cpu["torch_kernels"] is None
    assert "torch was not loaded" in cpu["missing_reason"]["torch_kernels"]
