"""The paper's published numbers (shipped in ocg/data/paper/) beside a reproduction."""

from __future__ import annotations

import pandas as pd

from ..config.model_registry import MODELS_FILE, load_models
from ..core.errors import OcgInputError
from ..core.paths import PAPER_TABLES_DIR

PAPER_FILES = {
    "table1": "paper_table1_zero_shot.csv",
    "table2": "paper_table2_pos_patterns.csv",
    "table3": "paper_table3_templates.csv",
    "table4": "paper_table4_one_shot_priming.csv",
    "table7": "paper_table7_reasoning.csv",
}


def paper_table(name: str) -> pd.DataFrame:
    """A published table; its `hf_id` column (the hub id of Table 5) is ocg's `paper_id`."""
    return pd.read_csv(PAPER_TABLES_DIR / PAPER_FILES[name]).rename(columns={"hf_id": "paper_id"})


def model_keys(models: list[str], models_file=None) -> pd.DataFrame:
    """Our model names with the id the paper prints for them (Table 5) and their paper name;
    a model the models file does not know is an error (its paper row could not be found)."""
    models_file = models_file or MODELS_FILE
    specs = load_models(models_file)
    unknown = [m for m in models if m not in specs]
    if unknown:
        raise OcgInputError(
            str(models_file),
            f"no entry for {unknown}: the paper comparison needs each "
            "model's entry (pass the models_file the run used)",
        )
    return pd.DataFrame(
        {
            "model": models,
            "paper_id": [specs[m].paper_id for m in models],
            "paper_name": [specs[m].paper_name for m in models],
        }
    )


def compare(ours: pd.DataFrame, name: str, models_file=None) -> pd.DataFrame:
    """Ours beside the paper's value and delta, and the difference (ours minus paper).

    Tables 1 and 4 join on hub id; Table 7 on the paper's model name (its CSV has no ids);
    Tables 2 and 3 (means over models) on POS pattern or template and condition.
    """
    paper = paper_table(name)
    if ours.empty:
        return ours.assign(paper_value=pd.Series(dtype=float), diff_vs_paper=pd.Series(dtype=float))
    delta = [c for c in paper.columns if c.startswith("delta_")]
    value_col = "value" if "value" in paper else "mean_over_llms"
    renamed = paper.rename(
        columns={
            value_col: "paper_value",
            **{d: "paper_delta" for d in delta},
            "sd_over_llms": "paper_sd",
        }
    )
    if name in ("table1", "table4", "table7"):
        keys = model_keys(sorted(ours["model"].unique()), models_file)
        ours = ours.merge(keys, on="model", how="left")
        on = ["paper_id", "metric"] if name != "table7" else ["paper_name", "metric"]
        right = renamed.drop(columns=[c for c in ("model", "role") if c in renamed and c not in on])
        if name == "table7":
            right = renamed.rename(columns={"model": "paper_name"}).drop(columns=["role"])
        out = ours.merge(right, on=on, how="left")
    else:
        on = (
            ["pos_pattern", "metric"]
            if name == "table2"
            else ["template_id", "condition", "metric"]
        )
        out = ours.merge(renamed, on=on, how="left")
    ours_value = "value" if "value" in out else "mean_over_llms"
    out["diff_vs_paper"] = out[ours_value] - out["paper_value"]
    return out


def side_by_side(compared: pd.DataFrame, index) -> pd.DataFrame:
    """Display form: per metric, ours / paper / ours minus paper."""
    from .paper_tables import wide

    index = [index] if isinstance(index, str) else list(index)
    value = "value" if "value" in compared else "mean_over_llms"
    parts = {
        "ours": wide(compared, index, value),
        "paper": wide(compared, index, "paper_value"),
        "diff": wide(compared, index, "diff_vs_paper"),
    }
    table = pd.concat(parts, axis=1).swaplevel(axis=1)
    metrics = list(dict.fromkeys(m for m, _ in table.columns))
    return table[[(m, k) for m in metrics for k in ("ours", "paper", "diff")]]


def paper_wide(name: str) -> pd.DataFrame:
    """The paper's own table, for reference when no model of a reproduction is in it."""
    from .paper_tables import wide

    t = paper_table(name)
    if "value" in t:
        index = ["model", "role"] if name == "table7" else ["model"]
        delta = [c for c in t.columns if c.startswith("delta_")][0]
        return wide(t, index, "value", delta)
    index = ["pos_pattern"] if name == "table2" else ["template_id", "condition"]
    return wide(t, index, "mean_over_llms", "sd_over_llms")
