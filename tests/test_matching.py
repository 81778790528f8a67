"""Concept matching against hand-labelled real outputs, and the false friends it must refuse."""

import json
from pathlib import Path

import pytest

from ocg.metrics.coverage import MATCHING_QUALITY, MATCHING_RULES, analyse, load_nlp, match

LABELS = Path(__file__).parent / "data" / "matching_labels.jsonl"


@pytest.fixture(scope="module")
def nlp():
    return load_nlp("auto")


def present(nlp, text, concept, rule="pos_aware_lookup"):
    word, pos = concept.rsplit("_", 1)
    return match(analyse([text], nlp, rule=rule)[text], [word], pos)["all_present"]


@pytest.mark.parametrize("text, concept", [
    ("I could see the dog from here.", "can_N"),
    ("The building is tall.", "build_V"),
    ("She hung a painting on the wall.", "paint_V"),
    ("A dove sat on the roof.", "dive_V"),
    ("The bridge has a long span.", "spin_V"),
    ("A drunk man sang in the street.", "drink_V"),
])
def test_false_friends_do_not_match(nlp, text, concept):
    assert present(nlp, text, concept, "any_lookup")  # the POS-blind table admits them
    assert not present(nlp, text, concept)


@pytest.mark.parametrize("text, concept", [
    ("A boy rides a bike down the street.", "ride_V"),
    ("He is riding a horse.", "ride_V"),
    ("She bought a new sewing machine.", "sew_V"),
    ("She is sewing a dress.", "sew_V"),
    ("He drove a motorized scooter to work.", "motorize_V"),
    ("The kids are painting the fence.", "paint_V"),
    ("The bird dove into the water.", "dive_V"),
    ("He has drunk all the milk.", "drink_V"),
    ("Dogs chase the ball.", "dog_N"),
    ("The chef chops onions on the cutting board.", "cut_V"),
])
def test_true_matches_are_kept(nlp, text, concept):
    assert present(nlp, text, concept)


def test_rides_needs_the_lookup_repair(nlp):
    assert not present(nlp, "A boy rides a bike.", "ride_V", "commongen_lemma")


def test_precision_and_recall_on_labelled_real_outputs(nlp):
    """The numbers docs/METHODS.md and every scoring signature report, recomputed."""
    labels = [json.loads(line) for line in LABELS.read_text().splitlines()]
    assert len(labels) == MATCHING_QUALITY["labelled_pairs"]
    texts = sorted({r["output"] for r in labels})
    measured = {}
    for rule in MATCHING_RULES:
        tokens = analyse(texts, nlp, rule=rule)
        tp = fp = fn = 0
        for r in labels:
            word, pos = r["concept"].rsplit("_", 1)
            got = match(tokens[r["output"]], [word], pos)["all_present"]
            tp += got and r["present"]
            fp += got and not r["present"]
            fn += (not got) and r["present"]
        measured[rule] = {"precision": round(tp / (tp + fp), 3), "recall": round(tp / (tp + fn), 3)}
    assert measured == {rule: MATCHING_QUALITY[rule] for rule in MATCHING_RULES}
    ours, commongen = measured["pos_aware_lookup"], measured["commongen_lemma"]
    assert ours["precision"] >= commongen["precision"] and ours["recall"] > commongen["recall"] + 0.15


# --- The fast path (ocg/metrics/coverage.py: parse, IndexedAttributeRuler, worker processes)
# must give what spaCy as shipped gives.

EXTRA_TEXTS = ["I'm gonna let's go, y'all ain't gotta do it.", "Gonna wanna c'mon, y' all", "", " ",
               "Let's gotta  \n\n go", "Ain't nobody got time", "The DOG runs!!  And... it's 5 o'clock."]


def _label_texts():
    return sorted({json.loads(line)["output"] for line in LABELS.read_text().splitlines()}) + EXTRA_TEXTS


def test_indexed_attribute_ruler_finds_the_matchers_matches(nlp):
    from ocg.metrics.attribute_ruler import IndexedAttributeRuler, supports
    ruler = nlp.get_pipe("attribute_ruler")
    assert supports(ruler)
    fast = IndexedAttributeRuler(ruler)
    with nlp.select_pipes(disable=["attribute_ruler", "lemmatizer"]):
        docs = list(nlp.pipe(_label_texts()))
    found = [fast.match(doc) for doc in docs]
    assert found == [ruler.match(doc) for doc in docs]
    assert sum(map(len, found)) > len(docs)  # it did find matches (every token gets a tag rule)


def test_fast_pipeline_annotates_as_spacy_as_shipped(nlp):
    """numpy BLAS and the indexed ruler: the same tags, POS, morphology and lemmas as spaCy's own
    pipeline (BLIS, Matcher) on every labelled real output."""
    import spacy
    from thinc.api import NumpyOps

    from ocg.metrics.coverage import parse, resolve_spacy_model
    shipped = spacy.load(resolve_spacy_model("auto"), exclude=["parser", "ner", "senter"])
    assert getattr(shipped.get_pipe("tok2vec").model.ops, "use_blis", True)
    assert isinstance(nlp.get_pipe("tok2vec").model.ops, NumpyOps) and not nlp.get_pipe("tok2vec").model.ops.use_blis
    texts = _label_texts()

    def annotations(docs):
        return [[(t.text, t.tag_, t.pos_, str(t.morph), t.lemma_) for t in doc] for doc in docs]
    assert annotations(parse(texts, nlp)) == annotations(shipped.pipe(texts))


def test_verdicts_do_not_depend_on_the_number_of_processes(nlp, monkeypatch):
    import pandas as pd

    from ocg.metrics import coverage
    labels = [json.loads(line) for line in LABELS.read_text().splitlines()]
    answers = pd.Series([r["output"] for r in labels] + [None, ""])
    concepts = pd.Series([[r["concept"].rsplit("_", 1)[0]] for r in labels] + [["dog"], ["cat"]])
    patterns = pd.Series([r["concept"].rsplit("_", 1)[1] for r in labels] + ["N", "N"])
    one = coverage.score_coverage(answers, concepts, nlp, pos_patterns=patterns, n_process=1)
    monkeypatch.setattr(coverage, "MIN_TEXTS_PER_PROCESS", 10)
    job = coverage.CoverageJob(answers, concepts, nlp, pos_patterns=patterns, n_process=2)
    assert job.job.pool is not None  # really in two worker processes
    two = job.result()
    pd.testing.assert_frame_equal(one, two)
    assert one["all_present"].sum() > 0 and not one["all_present"].iloc[-2:].any()


def _die(items):
    import os
    os._exit(3)  # as a worker killed for memory would


def test_a_dead_worker_fails_scoring_instead_of_hanging(nlp, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    from ocg.metrics import coverage
    monkeypatch.setattr(coverage, "MIN_TEXTS_PER_PROCESS", 1)
    job = coverage._Job(_die, ["a", "b", "c", "d"], 2, nlp, None, "commongen_lemma", 8)
    with pytest.raises(BrokenProcessPool):
        job.result()
    assert job.pool is None  # closed


def test_workers_die_with_a_killed_scoring_process(tmp_path):
    """kill -9 of the scoring process (a cancelled job, an OOM kill) leaves no worker running."""
    import os
    import signal
    import subprocess
    import sys
    import time
    script = tmp_path / "parent.py"
    script.write_text(
        "import time\nfrom ocg.metrics import coverage\ncoverage.MIN_TEXTS_PER_PROCESS = 1\n"
        "def slow(items):\n    time.sleep(120)\n    return items\n"
        "job = coverage._Job(slow, [1, 2, 3, 4], 2, None, None, 'commongen_lemma', 1)\n"
        "time.sleep(1)\nprint(' '.join(map(str, job.pool._processes)), flush=True)\ntime.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert len(workers) == 2

    def alive(pid):
        try:
            with open(f"/proc/{pid}/status") as fh:
                return "\nState:\tZ" not in fh.read()
        except FileNotFoundError:
            return False
    assert all(alive(p) for p in workers)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 15
    while any(alive(p) for p in workers) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in workers)
