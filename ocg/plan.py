"""Which notebook runs with which parameters: one plan for `ocg report` and both sweep executors.

A run file (params/runs/) and a sweep file (params/sweeps/) name the same things: models, the
models file, conditions, concept sets, templates, metrics and scoring settings. Every notebook
gets every one of them that it reads, from here, so a sweep with its own models file reaches
the analyses too (tests check each parameter exists in the notebook's parameters cell).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MODEL_NOTEBOOKS = ("01_generate", "02_score")
ANALYSES = ("03_main_results", "04_pos_patterns", "05_templates", "06_priming",
            "07_reasoning_models", "08_concept_difficulty", "09_cases")
# Analyses that join our models to the paper's or read their entries (base_model).
_READ_MODELS_FILE = {"03_main_results", "06_priming", "07_reasoning_models"}
_WRITE_TABLES = {"03_main_results", "04_pos_patterns", "05_templates", "06_priming",
                 "07_reasoning_models", "08_concept_difficulty"}


@dataclass(frozen=True)
class Dirs:
    """Where one run's notebooks read and write."""
    generations: Path
    scores: Path
    reports: Path
    dataset: Path | None = None


def notebook_params(notebook: str, cfg: dict, dirs: Dirs, models: list[str]) -> dict:
    """The parameters `notebook` gets for these models under this run or sweep configuration."""
    if notebook == "00_build_data":
        return {"n_concepts": cfg["n_concepts"]}
    if notebook == "01_generate":
        (model,) = models
        return {"model": model, "conditions": cfg["conditions"], "subset_k": cfg["subset_k"],
                "template_ids": cfg["template_ids"], "generations_dir": str(dirs.generations),
                "models_file": cfg["models_file"],
                "dataset": str(dirs.dataset) if dirs.dataset else None}
    if notebook == "02_score":
        return {"generations_dir": str(dirs.generations), "models": list(models),
                "metrics": cfg["metrics"], "scoring": dict(cfg["scoring"]), "scores_dir": str(dirs.scores)}
    if notebook not in ANALYSES:
        raise ValueError(f"no plan for notebook {notebook!r}")
    params = {"scores_dir": str(dirs.scores), "models": list(models),
              "allow_incomplete": bool(cfg.get("allow_incomplete", False))}
    if notebook in _READ_MODELS_FILE:
        params["models_file"] = cfg["models_file"]
    if notebook in _WRITE_TABLES:
        params["reports_dir"] = str(dirs.reports)
    if notebook == "07_reasoning_models" and cfg.get("table7_pairs"):
        params.update(pairs=cfg["table7_pairs"], pairs_note=cfg.get("table7_note", ""))
    return params


def model_steps(cfg: dict, dirs: Dirs, model: str) -> list[tuple[str, dict]]:
    """(notebook, parameters) of one model's task, in order."""
    return [(nb, notebook_params(nb, cfg, dirs, [model])) for nb in cfg["notebooks"]]


def analysis_steps(cfg: dict, dirs: Dirs, models: list[str]) -> list[tuple[str, dict]]:
    return [(nb, notebook_params(nb, cfg, dirs, models)) for nb in cfg["analysis"]]
