"""How often real LLM outputs copy the concept list (docs/METHODS.md, "Answers that copy the list").

    .venv/bin/python benchmarks/list_copies.py
    .venv/bin/python benchmarks/list_copies.py --smoke [--results DIR]   # seconds: 2 per model

Reads CommonGen-Eval's 2,496 outputs for the 208 five-concept sets (ocg/data/, 12 models),
matches the concepts as scoring does (ocg.metrics.coverage, the default rule), sets the list
flags as scoring does (ocg.metrics.listcopy), with each set's concepts in the order the models
were given them (CommonGen-Eval's, alphabetical), and prints how many answers are in order, copy
the list and are a bare list, overall and per model. tests/metrics/test_list_copies.py checks the
figure METHODS states against `measure()`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from recording import add_smoke_options, record, use_results

from ocg.core.paths import COMMONGEN_EVAL_5CONCEPT

OUTPUTS = COMMONGEN_EVAL_5CONCEPT  # shipped with the package: ocg/data/


def measure(path: Path = OUTPUTS, per_model: int | None = None) -> pd.DataFrame:
    """One row per output: model, all_present, in_order, copies_list, bare_list; of the first
    `per_model` outputs of each model (None: all)."""
    from ocg.metrics.listcopy import flag_texts

    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    df = pd.DataFrame(rows)
    if per_model is not None:
        df = df.groupby("model", sort=False).head(per_model).reset_index(drop=True)
    concepts = df["concept_set"].map(lambda cs: [c.rsplit("_", 1)[0] for c in cs])
    patterns = df["concept_set"].map(lambda cs: "".join(c.rsplit("_", 1)[1] for c in cs))
    return pd.concat([df[["model"]], flag_texts(df["output"], concepts, patterns)], axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_options(parser, "the first 2 outputs of each of the 12 models")
    args = parser.parse_args()
    use_results(args)
    m = measure(per_model=2 if args.smoke else None)
    total = m[["all_present", "in_order", "copies_list", "bare_list"]].sum().astype(int)
    print(
        f"{len(m)} outputs: {total.all_present} with every concept, {total.in_order} in order, "
        f"{total.copies_list} copy the list ({100 * total.copies_list / len(m):.2f}%; "
        f"{100 * total.copies_list / max(total.in_order, 1):.2f}% of those in order), {total.bare_list} bare lists"
    )
    per_model = m.groupby("model")[["in_order", "copies_list", "bare_list"]].sum()
    print(per_model.to_string())
    record(
        "list_copies",
        {
            "outputs": len(m),
            **{k: int(v) for k, v in total.items()},
            "copies_pct": round(100 * total.copies_list / len(m), 2),
            "copies_pct_of_in_order": round(100 * total.copies_list / max(total.in_order, 1), 2),
            "per_model": per_model.astype(int).to_dict(orient="index"),
        },
        vars(args),
    )


if __name__ == "__main__":
    main()
