"""The main job: the numbered notebooks run in order with papermill, as a run file says."""

from __future__ import annotations

from pathlib import Path

import yaml

from .errors import OcgInputError
from .notebooks import run_notebook
from .paths import PARAMS_DIR, outputs_dir

DEMO_RUN = PARAMS_DIR / "runs" / "demo.yaml"
RUN_KEYS = {"name": str, "n_concepts": int, "subset_k": (int, type(None)), "conditions": list,
            "models": list}


def load_run(path: str | Path = DEMO_RUN) -> dict:
    path = Path(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise OcgInputError(str(path), "expected a mapping")
    for key, kind in RUN_KEYS.items():
        if key not in raw:
            raise OcgInputError(f"{path}: {key}", "missing")
        if not isinstance(raw[key], kind):
            raise OcgInputError(f"{path}: {key}", f"got {raw[key]!r}")
    extra = sorted(set(raw) - set(RUN_KEYS))
    if extra:
        raise OcgInputError(f"{path}: {extra[0]}", f"unknown key; known: {sorted(RUN_KEYS)}")
    return raw


def run_demo(run_file: str | Path | None = None) -> int:
    run = load_run(run_file or DEMO_RUN)
    out = outputs_dir()
    nb_dir = out / "notebooks" / run["name"]
    dataset = out / "data" / f"n{run['n_concepts']}"
    print(f"[1] build the dataset -> {dataset}")
    run_notebook("00_build_data", {"n_concepts": run["n_concepts"]}, out_dir=nb_dir, progress=True)
    for model in run["models"]:
        print(f"[2] generate with {model} ({run['subset_k']} concept sets, {run['conditions']})")
        run_notebook("01_generate", {"model": model, "conditions": run["conditions"],
                                     "subset_k": run["subset_k"], "dataset": str(dataset)},
                     out_dir=nb_dir / model, progress=True)
    print(f"[3] score {run['models']}")
    run_notebook("02_score", {"models": run["models"]}, out_dir=nb_dir, progress=True)
    print(f"executed notebooks and HTML: {nb_dir}")
    print(f"generations:                 {out / 'generations'}")
    print(f"scores:                      {out / 'scores'}")
    return 0
