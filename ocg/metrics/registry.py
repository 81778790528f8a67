"""The reported metrics, each declared once, grouped by the scoring family that yields them: what
scoring, tables, bootstrap, LaTeX, the sensitivity view and the notebooks know about a metric
(docs/METHODS.md, "Metrics").

A `MetricFamily` names a scoring family (ocg/scoring/families.py: its columns, key and
computation), the level its columns live at (answers, or groups of permutations: 24 of four
concepts, 120 of five, m sampled), the columns summed over that level (its sufficient
statistics, metrics/statistics.py) and the `Metric`s it reports. A metric is a ratio of statistics, `scale x numerator / denominator`, where a statistic
is a summed column, `n_<column>` (how many values of it were not missing), `n` (answers) or
`n_groups`; a per-answer or per-group mean is the case whose denominator is a count. The same
ratio gives the summary value, the template average (a `pooled` metric as a ratio of sums, as
every row of the paper's Table 1 satisfies OR = w/ / w/o), a share per POS pattern (Table 2) and
the bootstrap over concept sets.

The six families of the paper are declared here, in the paper's column order. Another one is
declared where its scoring Family is (docs/developing.md, "Adding a metric"): `declare` adds it here, and
every reader asks at call time (`metrics()`, `metric()`, `in_table()`), so it is seen everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

COMPARISONS = ("table1", "table4")  # every metric: per model, averaged over templates
POS_TABLES = (*COMPARISONS, "table2", "table3")  # and per POS pattern (2) and per template (3)
COVERAGE_TABLES = (*POS_TABLES, "table7")  # and reasoning models beside their base models


@dataclass(frozen=True)
class Metric:
    name: str  # column in summaries and tables, and the paper CSVs' metric name
    label: str  # as printed in the paper's tables
    higher_is_better: bool
    numerator: str  # a statistic (above): a summed column, n_<column>, n or n_groups
    denominator: str  # the statistic it is divided by
    scale: float  # 100 for percentages
    pooled: bool = False  # averaged over templates as a ratio of sums (Ordered Rate), not a mean
    tables: tuple[str, ...] = COMPARISONS  # the paper's tables that report it
    family: str = ""  # set by its MetricFamily
    unit: str = ""  # as a reader should read the number
    what: str = ""  # one line for a legend (docs/METHODS.md, "Metrics", says it fully)


@dataclass(frozen=True)
class MetricFamily:
    name: str  # the scoring family (params/scoring.yaml `metrics`) that yields them
    level: str  # "answers" or "groups": the table its columns go to, the rows summed
    sums: tuple[str, ...]  # its columns summed as sufficient statistics
    metrics: tuple[Metric, ...] = ()

    def __post_init__(self):
        if self.level not in ("answers", "groups"):
            raise ValueError(
                f"metric family {self.name}: level {self.level!r}, expected answers or groups"
            )
        object.__setattr__(
            self, "metrics", tuple(replace(m, family=self.name) for m in self.metrics)
        )


FAMILIES: dict[str, MetricFamily] = {}


def declare(family: MetricFamily) -> MetricFamily:
    """Add a family's reported metrics (again the same object: nothing happens)."""
    known = FAMILIES.get(family.name)
    if known is not None and known != family:
        raise ValueError(f"metric family {family.name} is declared twice, differently")
    clash = {m.name for m in family.metrics} & {
        m.name for f in FAMILIES.values() if f.name != family.name for m in f.metrics
    }
    if clash:
        raise ValueError(f"metric family {family.name}: metric(s) {sorted(clash)} already declared")
    FAMILIES[family.name] = family
    return family


def metrics() -> list[Metric]:
    """Every declared metric, in the paper's column order (then any declared later)."""
    return [m for f in FAMILIES.values() for m in f.metrics]


def metric(name: str) -> Metric | None:
    return next((m for m in metrics() if m.name == name), None)


def require(name: str) -> Metric:
    """The metric named `name`; a name no metric has is a bug here (KeyError)."""
    if (found := metric(name)) is None:
        raise KeyError(name)
    return found


def names() -> list[str]:
    return [m.name for m in metrics()]


def in_table(table: str) -> list[Metric]:
    """The metrics the paper's `table` (table1, table2...) reports, in column order."""
    return [m for m in metrics() if table in m.tables]


def label(name: str) -> str:
    """The metric's label as printed in the paper (a column that is no metric: its name)."""
    m = metric(name)
    return m.label if m else name


def lower_is_better(name: str) -> bool:
    m = metric(name)
    return m is not None and not m.higher_is_better


for _family in (
    MetricFamily(
        "coverage",
        "answers",
        ("all_present", "in_order", "pos_all_present", "pos_in_order"),
        (
            Metric(
                "coverage_wo_order",
                "w/o order",
                True,
                "all_present",
                "n",
                100.0,
                tables=COVERAGE_TABLES,
                unit="% of answers",
                what="answers that use all the concepts, in any order",
            ),
            Metric(
                "coverage_w_order",
                "w/ order",
                True,
                "in_order",
                "n",
                100.0,
                tables=COVERAGE_TABLES,
                unit="% of answers",
                what="answers that use all the concepts in the order the prompt gave",
            ),
            Metric(
                "ordered_rate",
                "Ordered Rate",
                True,
                "in_order",
                "all_present",
                100.0,
                pooled=True,
                tables=COVERAGE_TABLES,
                unit="% of complete answers",
                what="of the answers with all the concepts, those in the given order (w/ order / w/o order)",
            ),
            Metric(
                "pos_coverage_wo_order",
                "PoS w/o order",
                True,
                "pos_all_present",
                "n",
                100.0,
                tables=("table1",),
                unit="% of answers",
                what="answers that use every concept as the part of speech its set gives it "
                "(spaCy's tag: N a noun, V a verb), in any order",
            ),
            Metric(
                "pos_coverage_w_order",
                "PoS w/ order",
                True,
                "pos_in_order",
                "n",
                100.0,
                tables=("table1",),
                unit="% of answers",
                what="answers that use every concept as its part of speech, in the given order",
            ),
        ),
    ),
    MetricFamily(
        "pbleu",
        "groups",
        ("pbleu",),
        (
            Metric(
                "pbleu",
                "pBLEU",
                False,
                "pbleu",
                "n_pbleu",
                1.0,
                unit="BLEU, 0-100",
                what="how alike a set's answers over its permutations are (pairwise BLEU); lower: more diverse",
            ),
        ),
    ),
    MetricFamily(
        "pbleurt",
        "groups",
        ("pbleurt",),
        (
            Metric(
                "pbleurt",
                "pBLEURT",
                False,
                "pbleurt",
                "n_pbleurt",
                1.0,
                unit="BLEURT x 100",
                what="how alike a set's answers are in meaning (pairwise BLEURT-20); lower: more diverse",
            ),
        ),
    ),
    MetricFamily(
        "distinct",
        "answers",
        ("distinct_2",),
        (
            Metric(
                "distinct_2",
                "Distinct",
                True,
                "distinct_2",
                "n",
                100.0,
                unit="% of bigrams",
                what="unique bigrams per answer (Distinct-2, averaged over answers)",
            ),
        ),
    ),
    MetricFamily(
        "diverse",
        "groups",
        ("diverse_rate",),
        (
            Metric(
                "diverse_rate",
                "Diverse Rate",
                True,
                "diverse_rate",
                "n_diverse_rate",
                100.0,
                tables=POS_TABLES,
                unit="% of answers",
                what="distinct answers among a set's permutations",
            ),
        ),
    ),
    MetricFamily(
        "perplexity",
        "answers",
        ("perplexity",),
        (
            Metric(
                "perplexity",
                "Perplexity",
                False,
                "perplexity",
                "n_perplexity",
                1.0,
                unit="perplexity",
                what="fluency by a language model (GPT2-XL in the paper), mean over answers; lower: more fluent",
            ),
        ),
    ),
):
    declare(_family)

CONDITION_LABELS = {"original": "without_phrase", "ordered": "with_phrase"}  # paper Table 3

# The metrics the paper reports (its Tables 1 and 4: ocg/data/paper/), fixed before any run: the
# first of the two test families Holm's adjustment treats separately (docs/METHODS.md, "Analyses"),
# so a metric declared later (a judge, SLOR, semantic diversity, ...) changes no p-value of these.
PAPER_METRICS = (
    "coverage_wo_order",
    "coverage_w_order",
    "ordered_rate",
    "pbleu",
    "pbleurt",
    "distinct_2",
    "diverse_rate",
    "perplexity",
)
HOLM_FAMILIES = ("paper", "extra")


def holm_family(name: str) -> str:
    """The pre-specified test family of a metric: "paper" (PAPER_METRICS) or "extra" (every other)."""
    return HOLM_FAMILIES[0] if name in PAPER_METRICS else HOLM_FAMILIES[1]
