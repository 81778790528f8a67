"""One model against another (`ocg compare`): two reports' models side by side on the instances
both answered.

Each side is a report folder's own score sets (`scores/<model>/`, pinned when the report scored).
The instances both answered (same condition, template, concept set, permutation and, in a sampled
run, sample) are kept; per condition, each per-answer metric present on both sides is compared as
a paired difference, A minus B, by the project's own paired test (`uncertainty.paired_test`: the
two models take the place of its two conditions, concept sets the paired unit): the bootstrap 95%
interval of the difference over concept sets and the two-sided sign-flip p-value, exact up to
EXACT_MAX_UNITS sets, with Holm's adjustment over one condition's metrics; a skewed metric
(perplexity, SLOR) has its medians and median difference beside (versus_medians.py). The answers
whose order verdicts (`in_order`) differ are listed. Where a judge metric is compared, each side's
judge is set beside ocg's coverage and order checks (share, Cohen's kappa and their intervals,
agreement.py). Designs that share no instance are refused. A side that is a reference entry (its
run card's `reference`) is named so: its numbers are over one sentence per concept set, asked no
order (comparison_page.reference_note).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from ..core.errors import OcgInputError
from ..core.frames import INSTANCE_KEY, SAMPLE, SET_KEY
from ..core.layout import ReportFolder
from ..metrics.registry import FAMILIES, require
from ..records import Signature
from ..results.designs import describe_design, design
from ..results.scores import load_scores, scoring_differences
from ..scoring.judge_agreement import cell_counts, judged_beside_checks
from ..scoring.scoreset import holds_scores
from .agreement import Agreement, from_counts
from .compare import check_finished
from .sample_size import SetsNeeded, sets_needed
from .uncertainty import Resampling, bootstrap_ci, paired_test, per_unit, set_statistics
from .versus_medians import with_medians
from .versus_sides import HowMade, how_made

# What every value of a comparison is computed on, as comparison.json and its page state it (and
# `ocg verify --comparisons` checks they do): uncertainty.py's pooled ratios, not Table 1's mean
# over templates.
AGGREGATION = {
    "name": "pooled",
    "values": "value_a, value_b, the difference, its interval and its p: each metric one ratio "
    "pooled over the shared answers of the condition, every template together (its numerators "
    "summed over its denominators)",
    "medians": "median_a, median_b: each side's median over the shared answers of the condition "
    "it scored, every template together; median_difference: the median of the paired per-answer "
    "differences",
    "report_tables": "a report's Table 1, Table 4 and forced order (results.json's `value`) "
    "average per-template values over templates instead, a pooled metric (Ordered Rate) "
    "excepted: the two agree where every template has as many scored answers",
}

# The answers whose verdicts differ, listed at most this many (in instance order); the count is whole.
MAX_LISTED = 500


@dataclass(frozen=True)
class Side:
    """One side of a comparison: the report it comes from, the model picked and its design."""

    name: str  # the report's folder name
    folder: Path
    model: str
    models: list[str]  # every model the report scored
    design: dict  # ocg/results/designs.py `design`, of every instance it answered
    n: int  # instances (answers) it holds
    # its source where the model is a reference entry (docs/METHODS.md, "Reference rows"), else None
    reference: str | None = None
    made: HowMade = HowMade()  # model id, revision, dtype, quantisation, decoding (versus_sides.py)


def report_models(folder: Path) -> list[str]:
    """The models a finished report scored (its `scores/<model>/`), else an error naming it."""
    if not folder.is_dir():
        raise OcgInputError(
            str(folder), "no such report folder; expected outputs/reports/<name> or a run file"
        )
    check_finished(folder)
    root = ReportFolder(folder).scores
    found = sorted(p.name for p in root.iterdir() if holds_scores(p)) if root.is_dir() else []
    if not found:
        raise OcgInputError(
            str(folder), "no score sets under scores/; expected a report whose scoring finished"
        )
    return found


def pick_model(folder: Path, model: str | None, flag: str) -> str:
    """The model named by `flag`, or the report's only one; refused when ambiguous or unknown."""
    found = report_models(folder)
    if model is None:
        if len(found) > 1:
            raise OcgInputError(
                flag, f"{folder} holds {len(found)} models {found}; pick one with {flag} MODEL"
            )
        return found[0]
    if model not in found:
        raise OcgInputError(flag, f"{model!r} is not a model of {folder} (it holds {found})")
    return model


def _load(folder: Path, model: str) -> tuple[Side, pd.DataFrame, Signature]:
    scores = load_scores(ReportFolder(folder).scores, [model], tables=("answers",))
    answers = scores.answers
    keys = answers[[*INSTANCE_KEY, "pos_pattern"]].drop_duplicates()
    side = Side(
        name=folder.name,
        folder=folder,
        model=model,
        models=report_models(folder),
        design=design(keys),
        n=len(answers),
        reference=scores.references.get(model),
        made=how_made(folder, model, scores.signatures.get(model)),
    )
    return side, answers, scores.signatures[model]


def _key(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """The instance key: a sampled run's sample too (sample 0 where one side has none)."""
    return [*INSTANCE_KEY, SAMPLE] if SAMPLE in a or SAMPLE in b else list(INSTANCE_KEY)


def _with_sample(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    if SAMPLE in key:
        return df.assign(**{SAMPLE: df[SAMPLE].fillna(0).astype(int) if SAMPLE in df else 0})
    return df


def _per_answer(tests: pd.DataFrame) -> pd.DataFrame:
    """Rows of metrics measured per answer (not over a group's permutations)."""
    level = {m: FAMILIES[require(m).family].level for m in tests["metric"]} if len(tests) else {}
    return tests[tests["metric"].map(level) == "answers"] if len(tests) else tests


def _tests(a: pd.DataFrame, b: pd.DataFrame, condition: str, key, resampling) -> pd.DataFrame:
    """Per metric: A's and B's values and A minus B with its interval and paired test; a skewed
    metric's medians beside (versus_medians.py)."""
    a, b = a[a["condition"] == condition], b[b["condition"] == condition]
    pair = pd.concat(
        [a.assign(model="pair", condition="a"), b.assign(model="pair", condition="b")],
        ignore_index=True,
    )
    groups = pd.DataFrame(columns=["model", *SET_KEY])  # per-answer metrics only
    tests = _per_answer(paired_test(pair, groups, "pair", resampling, conditions=("a", "b")))
    if tests.empty:
        return tests
    for at, side in enumerate(("a", "b"), start=2):
        values = bootstrap_ci(pair, groups, "pair", side, resampling).set_index("metric")
        tests.insert(at, f"value_{side}", tests["metric"].map(values["value"]))
    tests = with_medians(tests, a, b, key, condition)
    tests = _with_sets_needed(tests, pair, groups)
    return tests.drop(columns="model").assign(condition=condition)


def _with_sets_needed(tests: pd.DataFrame, pair: pd.DataFrame, groups) -> pd.DataFrame:
    """Per metric, the concept sets an interval of ±|Δ|/2 and 80% power would need, from the
    spread of the per-set differences A - B (analysis/sample_size.py)."""
    sa = set_statistics(pair, groups, "pair", "a", "sets")
    sb = set_statistics(pair, groups, "pair", "b", "sets").reindex(sa.index)
    va, vb = per_unit(sa), per_unit(sb)
    plans = [
        sets_needed(va[m] - vb[m], d)
        if m in va and m in vb
        else SetsNeeded(None, None, None, None, 0, "the metric has no per-set value on one side")
        for m, d in zip(tests["metric"], tests["difference"])
    ]
    return tests.assign(
        per_set_sd=[p.sd for p in plans],
        sets_with_difference=[p.n_sets for p in plans],
        interval_half_width=[p.half_width for p in plans],
        sets_for_interval=[p.for_interval for p in plans],
        sets_for_power=[p.for_power for p in plans],
        sets_needed_reason=[p.reason for p in plans],
    )


def _judge_agreements(tests: pd.DataFrame, a: pd.DataFrame, b: pd.DataFrame):
    """Where a judge metric is compared: each side's judge against ocg's coverage and order checks
    (analysis/agreement.py) over the shared answers it judged, every condition pooled (as the
    landing page pools a model's); None where no judge metric is compared. A side without ocg's
    checks beside its judge has none."""
    if tests.empty or not tests["metric"].map(lambda m: require(m).family).eq("judge").any():
        return None
    return {
        side: from_counts(cell_counts(answers)) if judged_beside_checks(answers) else []
        for side, answers in (("a", a), ("b", b))
    }


def _verdicts(a: pd.DataFrame, b: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """The shared answers whose `in_order` verdicts differ, in instance order."""
    if "in_order" not in a or "in_order" not in b:
        return pd.DataFrame(columns=[*key, "concepts", "answer_a", "answer_b", "in_order_a"])
    cols = [*key, "in_order", "answer"]
    both = a[[*cols, "concept_words"]].merge(b[cols], on=key, suffixes=("_a", "_b"))
    differ = both[both["in_order_a"].astype(bool) != both["in_order_b"].astype(bool)]
    return (
        differ.rename(columns={"concept_words": "concepts"})
        .astype({"concepts": str})
        .sort_values(key)
        .reset_index(drop=True)[
            [*key, "concepts", "in_order_a", "answer_a", "in_order_b", "answer_b"]
        ]
    )


@dataclass(frozen=True)
class Comparison:
    """Two models on the instances both answered: the tests per condition and metric, and the
    answers whose order verdicts differ."""

    a: Side
    b: Side
    shared: int  # instances both answered
    shared_sets: int
    conditions: list[str]
    tests: pd.DataFrame  # per condition and metric (uncertainty.paired_test's columns)
    differ: pd.DataFrame  # answers whose in_order differs, at most MAX_LISTED
    n_differ: int
    n_verdicts: int  # shared answers with a verdict on both sides
    scoring: list[str] = field(default_factory=list)  # how their scoring differs, if it does
    resampling: Resampling = Resampling()
    # where a judge metric is compared: per side ("a", "b"), its judge against ocg's checks
    judge: dict[str, list[Agreement]] | None = None


def refusal(a: Side, b: Side) -> str:
    """One line: what each side has, when they share nothing."""
    return (
        f"{a.name} ({a.model}) and {b.name} ({b.model}) share no instance: "
        f"A has {describe_design(a.design)}; B has {describe_design(b.design)}; "
        "compare reports run on the same conditions, templates and concept sets"
    )


def compare_models(
    folder_a: Path,
    folder_b: Path,
    *,
    model_a: str | None = None,
    model_b: str | None = None,
    resampling: Resampling = Resampling(),
) -> Comparison:
    """Model A of one report against model B of another (or the same) on their shared instances."""
    side_a, a, sig_a = _load(folder_a, pick_model(folder_a, model_a, "--model-a"))
    side_b, b, sig_b = _load(folder_b, pick_model(folder_b, model_b, "--model-b"))
    c = compare_answers(side_a, a, side_b, b, resampling=resampling)
    scoring = scoring_differences(
        {f"A {side_a.model}": sig_a, f"B {side_b.model}": sig_b}, compared_families(c.tests)
    )
    return replace(c, scoring=[str(line) for line in scoring])


def compared_families(tests: pd.DataFrame) -> set[str]:
    """The scoring families a comparison reads: those of its tested metrics, and coverage (the
    order verdicts it lists); a difference in another family's scoring (a judge's settings where
    no judge metric is compared) touches none of its numbers."""
    metrics = tests["metric"] if "metric" in tests else []
    return {"coverage", *(require(m).family for m in metrics)}


def compare_answers(
    side_a: Side,
    a: pd.DataFrame,
    side_b: Side,
    b: pd.DataFrame,
    *,
    resampling: Resampling = Resampling(),
    scoring: list[str] | None = None,
) -> Comparison:
    """The comparison of two sides' scored answers (a score set's answers table each), on the
    instances both answered; `scoring`: how their scoring differs, if it does."""
    key = _key(a, b)
    a, b = _with_sample(a, key), _with_sample(b, key)
    shared = a[key].drop_duplicates().merge(b[key].drop_duplicates(), on=key)
    if shared.empty:
        raise OcgInputError("ocg compare", refusal(side_a, side_b))
    a, b = a.merge(shared, on=key), b.merge(shared, on=key)
    conditions = sorted(shared["condition"].unique())
    tests = [_tests(a, b, c, key, resampling) for c in conditions]
    tests = pd.concat([t for t in tests if len(t)] or [pd.DataFrame()], ignore_index=True)
    differ = _verdicts(a, b, key)
    return Comparison(
        a=side_a,
        b=side_b,
        shared=len(shared),
        shared_sets=int(shared["set_id"].nunique()),
        conditions=conditions,
        tests=tests,
        differ=differ.head(MAX_LISTED),
        n_differ=len(differ),
        n_verdicts=len(shared) if "in_order" in a and "in_order" in b else 0,
        scoring=list(scoring or []),
        resampling=resampling,
        judge=_judge_agreements(tests, a, b),
    )
