"""PoS-correct coverage (docs/METHODS.md, "PoS-correct coverage"): the verdicts on constructed
sentences, and the agreement with CommonGen-Eval's "pos" rule on its real five-concept outputs."""

import json

import pandas as pd
import pytest

from ocg.core.paths import COMMONGEN_EVAL_5CONCEPT
from ocg.metrics.coverage import load_nlp, score_coverage
from ocg.metrics.pos_coverage import AGREEMENT, agreement, commongen_eval_pos

OUTPUTS = COMMONGEN_EVAL_5CONCEPT  # shipped with the package


@pytest.fixture(scope="module")
def nlp():
    return load_nlp("auto", "no_parser")


def _verdicts(nlp, text, concepts, pattern):
    row = score_coverage(
        pd.Series([text]), pd.Series([concepts]), nlp, pos_patterns=pd.Series([pattern])
    ).iloc[0]
    return bool(row["all_present"]), bool(row["pos_all_present"]), bool(row["pos_in_order"])


@pytest.mark.parametrize(
    ("text", "concepts", "pattern", "expected"),
    [
        ("The dog catches a frisbee.", ["dog", "catch", "frisbee"], "NVN", (True, True, True)),
        (
            "A frisbee is thrown to the dog that catches it.",
            ["dog", "catch", "frisbee"],
            "NVN",
            (True, True, False),
        ),
        (
            "The fish swim past a fishing boat.",
            ["boat", "fish"],
            "NV",
            (True, False, False),
        ),  # fish as a noun only
        ("They fish from the boat.", ["boat", "fish"], "NV", (True, True, False)),
        (
            "The catch was a big one for the dog.",
            ["dog", "catch"],
            "NV",
            (True, False, False),
        ),  # catch as a noun
    ],
)
def test_a_concept_counts_only_as_its_part_of_speech(nlp, text, concepts, pattern, expected):
    assert _verdicts(nlp, text, concepts, pattern) == expected


def test_commongen_evals_rule_reads_the_tag_letter_as_a_substring(nlp):
    assert commongen_eval_pos(nlp("The dog catches a frisbee."), ["dog_N", "catch_V", "frisbee_N"])
    assert not commongen_eval_pos(nlp("The catch of the dog."), ["dog_N", "catch_V"])


def test_agreement_with_commongen_evals_pos_rule_on_its_outputs(nlp):
    """The figure docs/METHODS.md states, recomputed on the 2,496 shipped outputs."""
    rows = [json.loads(line) for line in OUTPUTS.read_text().splitlines()]
    texts = [r["output"] for r in rows]
    ours = score_coverage(
        pd.Series(texts),
        pd.Series([[c.split("_")[0] for c in r["concept_set"]] for r in rows]),
        nlp,
        pos_patterns=pd.Series(["".join(c.split("_")[1] for c in r["concept_set"]) for r in rows]),
    )
    theirs = [commongen_eval_pos(doc, r["concept_set"]) for doc, r in zip(nlp.pipe(texts), rows)]
    assert agreement(list(ours["pos_all_present"]), theirs) == AGREEMENT
