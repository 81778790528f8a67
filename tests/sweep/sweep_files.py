"""What the sweep tests share: a site's sweep file of replay models (site setup, resource groups,
a partition per group), its models file, and `ocg` run as a process (python -m ocg.cli)."""

import os
import subprocess
import sys

import yaml

SETUP = [
    'module() { echo "module $*"; }  # a site\'s Lmod, as a function here',
    "module load cuda/12.1 python/3.11",
    'echo "site setup ran for ${SLURM_JOB_ID:-none}"',
]


def replay_models(tmp_path, names) -> str:
    path = tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump({"models": {n: {"backend": "replay", "id": f"x/{n}"} for n in names}})
    )
    return str(path)


def site_sweep(tmp_path, **slurm) -> str:
    """Three replay models in two resource groups: `api` queues on its own partition."""
    sweep = {
        "name": "site",
        "models": ["m-a", "api", "m-b"],
        "models_file": replay_models(tmp_path, ["m-a", "api", "m-b"]),
        "conditions": ["ordered"],
        "subset_k": 1,
        "template_ids": [0],
        "metrics": ["coverage"],
        "analysis": ["03_main_results"],
        "outputs": str(tmp_path / "out"),
        "resources": {
            "default": {"gpus": 1, "cpus": 1, "mem": "300M", "time": "00:20:00"},
            "models": {
                "api": {
                    "gpus": 0,
                    "mem": "200M",
                    "partition": "cpu",
                    "extra_args": ["--comment=api-group"],
                }
            },
        },
        "slurm": {
            "partition": "gpu",
            "account": "proj1",
            "throttle": 3,
            "setup": SETUP,
            "env": {"HF_HOME": "/shared/hf cache/it's", "OCG_SITE_NOTE": "$(touch pwned)"},
            "extra_args": ["--qos=normal"],
            "analysis": {
                "gpus": 0,
                "cpus": 1,
                "mem": "200M",
                "time": "00:20:00",
                "partition": "cpu",
            },
            **slurm,
        },
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    return str(path)


def ocg(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "ocg.cli", *args],
        capture_output=True,
        text=True,
        env=env or os.environ.copy(),
        timeout=900,
        cwd=cwd,
    )
