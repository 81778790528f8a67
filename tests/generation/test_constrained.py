"""The `ordered_constrained` condition: the grammar (ocg/generation/ordered_grammar.py), and a real
constrained run of the embedded model whose finished answers ocg's own matcher judges in order."""

import dataclasses
import json
import re
import shutil

import pandas as pd
import pytest
from helpers import disk_record

from ocg.errors import OcgInputError
from ocg.generation import generate, read_generations
from ocg.generation.ordered_grammar import FREE_WORDS, grammar_sha256, inflections, ordered_regex
from ocg.metrics.coverage import load_nlp, score_coverage
from ocg.models import get_model, parse_models

CONCEPTS, POS = ["dog", "frisbee", "catch", "throw"], "NNVV"


def admits(sentence: str, concepts=CONCEPTS, pos=POS) -> bool:
    return re.fullmatch(ordered_regex(concepts, pos), sentence) is not None


def test_inflections_come_from_the_lexicon_and_always_hold_the_concept():
    assert set(inflections("ride", "V")) == {"ride", "rides", "rode", "ridden", "riding"}
    assert set(inflections("knife", "N")) == {"knife", "knives"}  # the noun's forms only
    assert inflections("bobsle", "V") == ("bobsle",)  # not in the lexicon: the concept alone


@pytest.mark.parametrize("sentence", [
    "Dogs frisbee catch throw.",                                # the first concept opens the sentence
    "The dog caught the frisbee, then catches it and threw it back!",
    "My dogs, a frisbee: catching, throwing.",
    "A dog and a frisbee to catch and throw.",
])
def test_the_grammar_admits_the_concepts_inflected_in_order(sentence):
    assert admits(sentence)


@pytest.mark.parametrize("sentence, why", [
    ("The frisbee, the dog, catch and throw.", "out of order"),
    ("the dog frisbee catch throw.", "no capital first letter"),
    ("The doghouse frisbee catch throw.", "a concept glued to more letters is not the concept"),
    ("The dog frisbee catch throw", "no final stop"),
    ("The dog frisbee catch throw. And more.", "two sentences"),
    ("The dog and a b c d e frisbee catch throw.", f"more than {FREE_WORDS} free words between two concepts"),
    ("The dog frisbee catch throw and a b c d.", f"more than {FREE_WORDS} free words after the last"),
    ("The dog frisbee catches throwed.", "a form the lexicon does not have"),
])
def test_the_grammar_refuses(sentence, why):
    assert not admits(sentence), why


@pytest.fixture(scope="module")
def constrained_run(tmp_path_factory):
    """One concept set, template 0, 6 of its 24 orders, forced by xgrammar on the embedded model."""
    spec = dataclasses.replace(get_model("smollm2-135m-instruct"), batch_check=0)
    return generate(spec, conditions=["ordered_constrained"], subset_k=1, template_ids=[0], permutations=6,
                    batch_size=6, out_dir=tmp_path_factory.mktemp("constrained"), progress=False)


@pytest.mark.slow
def test_every_finished_constrained_answer_is_in_order_by_ocgs_matcher(constrained_run):
    df = read_generations(constrained_run)
    assert len(df) == 6
    scored = df.join(score_coverage(df.answer, df.concepts, load_nlp(), pos_patterns=df.pos_pattern))
    finished = scored[scored.finish_reason == "stop"]
    truncated = scored[scored.finish_reason == "length"]
    assert len(finished) + len(truncated) == 6 and len(finished) >= 3  # the budget (32 tokens) cuts few
    for r in finished.itertuples():
        assert re.fullmatch(r.grammar, r.raw), (r.grammar, r.raw)  # the forced text is the grammar's
        assert r.in_order, (r.concepts, r.answer)  # and ocg's matcher agrees: in order
    for r in truncated.itertuples():  # cut by the budget: a prefix of an admitted sentence
        assert r.completion_tokens == 32 and not re.fullmatch(r.grammar, r.raw)


@pytest.mark.slow
def test_records_and_run_card_carry_each_grammar(constrained_run):
    df = read_generations(constrained_run)
    card = json.loads((constrained_run / "run_card.json").read_text())["constrained"]["ordered_constrained"]
    assert card["library"] == "xgrammar" and card["library_version"] == "0.2.9"
    assert card["lexicon"] == "lemminflect" and card["lexicon_version"] == "0.2.3"
    for r in df.itertuples():
        assert r.grammar == ordered_regex(list(r.concepts), r.pos_pattern)
        assert r.grammar_sha256 == grammar_sha256(r.grammar) == card["grammar_sha256"][r.instance_id]


@pytest.mark.slow
def test_a_resume_refuses_records_forced_to_another_grammar(constrained_run, tmp_path):
    out = shutil.copytree(constrained_run.parent, tmp_path / "copy")
    store = out / constrained_run.name / "ordered_constrained.jsonl"
    lines = store.read_text().splitlines()
    first = disk_record(lines[0])  # rewritten as a format 2 line (a store reads both)
    first["grammar"] = first["grammar"].replace("{0,4}", "{0,9}")
    store.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    spec = dataclasses.replace(get_model("smollm2-135m-instruct"), batch_check=0)
    with pytest.raises(OcgInputError, match="ordered_constrained.jsonl:1.*another grammar"):
        generate(spec, conditions=["ordered_constrained"], subset_k=1, template_ids=[0], permutations=6,
                 batch_size=6, out_dir=out, progress=False)


def test_a_backend_that_cannot_force_a_grammar_is_refused(tmp_path):
    synth = parse_models({"models": {"synth": {"backend": "replay", "id": "synth", "replay": {}}}}, "m.yaml")["synth"]
    with pytest.raises(OcgInputError, match=r"\['ordered_constrained'\] force a grammar.*replay backend of synth"):
        generate(synth, conditions=["ordered", "ordered_constrained"], subset_k=1, template_ids=[0],
                 out_dir=tmp_path, progress=False)
    assert not list(tmp_path.rglob("*.jsonl"))  # refused before anything is written


def test_the_forced_table_is_table_4s_pattern_against_ordered_and_original():
    from test_analysis import hand_summary

    from ocg.analysis import tables
    s = hand_summary()
    forced = s[s.condition == "ordered"].assign(condition="ordered_constrained", coverage_w_order=100.0,
                                                perplexity=lambda d: d.perplexity + 40)
    t = tables.forced_order(pd.concat([s, forced])).set_index(["model", "metric"])
    assert t.loc[("m1", "coverage_w_order"), "value"] == 100.0
    assert t.loc[("m1", "coverage_w_order"), "delta_vs_ordered"] == pytest.approx(100.0 - 25.0)
    assert t.loc[("m1", "coverage_w_order"), "delta_vs_original"] == pytest.approx(100.0 - 20.0)
    assert t.loc[("m2", "perplexity"), "delta_vs_ordered"] == pytest.approx(40.0)
    assert tables.forced_order(s).empty  # no forced answers: an empty table, not an error


def test_every_forced_answer_not_in_order_is_counted_under_one_reason():
    from ocg.analysis import forcing
    rows = [  # (condition, in_order, truncated, answer, copies_list)
        ("ordered_constrained", True, False, "Dog frisbee catch throw.", True),
        ("ordered_constrained", True, True, "The dog caught a frisbee to catch and throw it", False),
        ("ordered_constrained", False, True, "The dog and the", False),
        ("ordered_constrained", False, False, "The dogs, the frisbee, catching the throwing.", False),
        ("ordered", False, False, "A frisbee for the dog.", False),
        ("ordered", True, False, "The dog, frisbee, catch, throw.", True),
    ]
    answers = pd.DataFrame([dict(model="m", instance_id=f"i{k}", concepts=CONCEPTS, pos_pattern=POS, condition=c,
                                 in_order=o, truncated=t, answer=a, copies_list=cl)
                            for k, (c, o, t, a, cl) in enumerate(rows)])
    o = forcing.outcomes(answers).set_index("condition")
    assert list(o.index) == ["ordered", "ordered_constrained"]
    forced = o.loc["ordered_constrained"]
    assert (forced["answers"], forced["in order"], forced["cut by budget"]) == (4, 2, 2)
    assert (forced["missed: budget"], forced["missed: finished"], forced["missed: failed"]) == (1, 1, 0)
    assert forced["list copies % of in order"] == 50.0
    assert list(forcing.unexplained(answers)["instance_id"]) == ["i3"]  # shown, never hidden


def test_the_case_browser_shows_a_forced_answers_grammar_under_its_prompt():
    from ocg.analysis.browser import _prompts_and_raw
    g = ordered_regex(CONCEPTS, POS)
    records = pd.DataFrame([{"instance_id": "ordered_constrained-a", "prompt": "Write it.", "raw": "Dog frisbee catch throw.",
                             "grammar": g},
                            {"instance_id": "ordered-a", "prompt": "Write it.", "raw": "A dog.", "grammar": None}])
    shown = _prompts_and_raw(records)
    assert shown[("ordered_constrained-a", 0)][0] == f"Write it.\n\n[decoded under the grammar]\n{g}"
    assert shown[("ordered-a", 0)] == ("Write it.", "A dog.")
