"""The `ordered_constrained` condition: the grammar (ocg/generation/ordered_grammar.py), and a real
constrained run of the embedded model whose finished answers ocg's own matcher judges in order."""

import json
import re
import shutil

import pandas as pd
import pytest

from ocg.config.model_registry import get_model, parse_models
from ocg.core.errors import OcgInputError
from ocg.data.lexicon import inflections
from ocg.generation import generate, read_generations
from ocg.generation.ordered_grammar import FREE_WORDS, grammar_sha256, ordered_regex
from ocg.metrics.coverage import load_nlp, score_coverage
from tests.helpers import disk_record

CONCEPTS, POS = ["dog", "frisbee", "catch", "throw"], "NNVV"


def admits(sentence: str, concepts=CONCEPTS, pos=POS) -> bool:
    return re.fullmatch(ordered_regex(concepts, pos), sentence) is not None


def test_inflections_come_from_the_lexicon_and_always_hold_the_concept():
    assert set(inflections("ride", "V")) == {"ride", "rides", "rode", "ridden", "riding"}
    assert set(inflections("knife", "N")) == {"knife", "knives"}  # the noun's forms only
    assert inflections("sheep", "N") == ("sheep",)  # the lexicon's plural is the word itself
    assert inflections("ski", "V") == (
        "ski",
        "skied",
        "skiing",
        "skis",
    )  # not the lexicon's "ski'd"
    assert admits("They skied down the hill.", ["ski", "hill"], "VN")
    assert not admits("They ski'd down the hill.", ["ski", "hill"], "VN")


@pytest.mark.parametrize(
    "word, pos, forms",
    [
        ("bar", "N", {"bar", "bars"}),
        ("can", "N", {"can", "cans"}),
        ("jean", "N", {"jean", "jeans"}),
        ("sunglass", "N", {"sunglass", "sunglasses"}),
        ("scissor", "N", {"scissor", "scissors"}),
        ("frisbee", "N", {"frisbee", "frisbees"}),
        ("cellphone", "N", {"cellphone", "cellphones"}),
        ("bobsle", "V", {"bobsle", "bobsles", "bobsled", "bobsling"}),
    ],
)
def test_a_word_the_lexicon_lacks_takes_lemminflects_rules_for_unknown_words(word, pos, forms):
    """lemminflect's getAllInflections has no entry for these in their part of speech
    (its getInflection falls back on rules): not only the bare dataset word."""
    assert set(inflections(word, pos)) == forms


def test_plurals_the_lexicon_lacked_are_admitted_in_a_sentence():
    assert admits(
        "The bars hold jeans and sunglasses.", ["bar", "hold", "jean", "sunglass"], "NVNN"
    )
    assert admits("Dogs catch frisbees.", ["dog", "catch", "frisbee"], "NVN")


@pytest.mark.parametrize(
    "sentence",
    [
        "Dogs frisbee catch throw.",  # the first concept opens the sentence
        "The dog caught the frisbee, then catches it and threw it back!",
        "My dogs, a frisbee: catching, throwing.",
        "A dog and a frisbee to catch and throw.",
    ],
)
def test_the_grammar_admits_the_concepts_inflected_in_order(sentence):
    assert admits(sentence)


@pytest.mark.parametrize(
    "sentence, why",
    [
        ("The frisbee, the dog, catch and throw.", "out of order"),
        ("the dog frisbee catch throw.", "no capital first letter"),
        ("The doghouse frisbee catch throw.", "a concept glued to more letters is not the concept"),
        ("The dog frisbee catch throw", "no final stop"),
        ("The dog frisbee catch throw. And more.", "two sentences"),
        (
            "The dog and a b c d e frisbee catch throw.",
            f"more than {FREE_WORDS} free words between two concepts",
        ),
        (
            "The dog frisbee catch throw and a b c d.",
            f"more than {FREE_WORDS} free words after the last",
        ),
        ("The dog frisbee catches throwed.", "a form the lexicon does not have"),
    ],
)
def test_the_grammar_refuses(sentence, why):
    assert not admits(sentence), why


@pytest.fixture(scope="module")
def constrained_run(tmp_path_factory):
    """One concept set, template 0, 6 of its 24 orders, forced by xgrammar on the embedded model."""
    spec = get_model("smollm2-135m-instruct").model_copy(update=dict(batch_check=0))
    return generate(
        spec,
        conditions=["ordered_constrained"],
        subset_k=1,
        template_ids=[0],
        permutations=6,
        batch_size=6,
        out_dir=tmp_path_factory.mktemp("constrained"),
        progress=False,
    )


@pytest.mark.slow
def test_every_finished_constrained_answer_is_in_order_by_ocgs_matcher(constrained_run):
    df = read_generations(constrained_run)
    assert len(df) == 6
    scored = df.join(
        score_coverage(df.answer, df.concepts, load_nlp(), pos_patterns=df.pos_pattern)
    )
    finished = scored[scored.finish_reason == "stop"]
    truncated = scored[scored.finish_reason == "length"]
    assert (
        len(finished) + len(truncated) == 6 and len(finished) >= 3
    )  # the budget (32 tokens) cuts few
    for r in finished.itertuples():
        assert re.fullmatch(r.grammar, r.raw), (
            r.grammar,
            r.raw,
        )  # the forced text is the grammar's
        assert r.in_order, (r.concepts, r.answer)  # and ocg's matcher agrees: in order
    for r in truncated.itertuples():  # cut by the budget: a prefix of an admitted sentence
        assert r.completion_tokens == 32 and not re.fullmatch(r.grammar, r.raw)


@pytest.mark.slow
def test_records_and_run_card_carry_each_grammar(constrained_run):
    df = read_generations(constrained_run)
    card = json.loads((constrained_run / "run_card.json").read_text())["constrained"][
        "ordered_constrained"
    ]
    assert card["library"] == "xgrammar" and card["library_version"] == "0.2.9"
    assert card["lexicon"] == "lemminflect" and card["lexicon_version"] == "0.2.3"
    for r in df.itertuples():
        assert r.grammar == ordered_regex(list(r.concepts), r.pos_pattern)
        assert (
            r.grammar_sha256 == grammar_sha256(r.grammar) == card["grammar_sha256"][r.instance_id]
        )


@pytest.mark.slow
def test_a_resume_refuses_records_forced_to_another_grammar(constrained_run, tmp_path):
    out = shutil.copytree(constrained_run.parent, tmp_path / "copy")
    store = out / constrained_run.name / "ordered_constrained.jsonl"
    lines = store.read_text().splitlines()
    first = disk_record(lines[0])  # rewritten as a format 2 line (a store reads both)
    first["grammar"] = first["grammar"].replace("{0,4}", "{0,9}")
    store.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    spec = get_model("smollm2-135m-instruct").model_copy(update=dict(batch_check=0))
    with pytest.raises(OcgInputError, match="ordered_constrained.jsonl:1.*another grammar"):
        generate(
            spec,
            conditions=["ordered_constrained"],
            subset_k=1,
            template_ids=[0],
            permutations=6,
            batch_size=6,
            out_dir=out,
            progress=False,
        )


def test_a_backend_that_cannot_force_a_grammar_is_refused(tmp_path):
    synth = parse_models(
        {"models": {"synth": {"backend": "replay", "id": "synth", "replay": {}}}}, "m.yaml"
    )["synth"]
    with pytest.raises(
        OcgInputError, match=r"\['ordered_constrained'\] force a grammar.*replay backend of synth"
    ):
        generate(
            synth,
            conditions=["ordered", "ordered_constrained"],
            subset_k=1,
            template_ids=[0],
            out_dir=tmp_path,
            progress=False,
        )
    assert not list(tmp_path.rglob("*.jsonl"))  # refused before anything is written


def test_the_forced_table_is_table_4s_pattern_against_ordered_and_original():
    from ocg.analysis import paper_tables as tables
    from tests.helpers import hand_summary

    s = hand_summary()
    forced = s[s.condition == "ordered"].assign(
        condition="ordered_constrained",
        coverage_w_order=100.0,
        perplexity=lambda d: d.perplexity + 40,
    )
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
        (
            "ordered_constrained",
            True,
            True,
            "The dog caught a frisbee to catch and throw it",
            False,
        ),
        ("ordered_constrained", False, True, "The dog and the", False),
        (
            "ordered_constrained",
            False,
            False,
            "The dogs, the frisbee, catching the throwing.",
            False,
        ),
        ("ordered", False, False, "A frisbee for the dog.", False),
        ("ordered", True, False, "The dog, frisbee, catch, throw.", True),
    ]
    answers = pd.DataFrame(
        [
            dict(
                model="m",
                instance_id=f"i{k}",
                concepts=CONCEPTS,
                pos_pattern=POS,
                condition=c,
                in_order=o,
                truncated=t,
                answer=a,
                copies_list=cl,
            )
            for k, (c, o, t, a, cl) in enumerate(rows)
        ]
    )
    o = forcing.outcomes(answers).set_index("condition")
    assert list(o.index) == ["ordered", "ordered_constrained"]
    forced = o.loc["ordered_constrained"]
    assert (forced["answers"], forced["in order"], forced["cut by budget"]) == (4, 2, 2)
    assert (forced["missed: budget"], forced["missed: finished"], forced["missed: failed"]) == (
        1,
        1,
        0,
    )
    assert forced["list copies % of in order"] == 50.0
    assert list(forcing.unexplained(answers)["instance_id"]) == ["i3"]  # shown, never hidden


def test_the_case_browser_shows_a_forced_answers_grammar_under_its_prompt():
    from ocg.site.browser import _prompts_and_raw

    g = ordered_regex(CONCEPTS, POS)
    records = pd.DataFrame(
        [
            {
                "instance_id": "ordered_constrained-a",
                "prompt": "Write it.",
                "raw": "Dog frisbee catch throw.",
                "grammar": g,
            },
            {"instance_id": "ordered-a", "prompt": "Write it.", "raw": "A dog.", "grammar": None},
        ]
    )
    shown = _prompts_and_raw(records)
    assert (
        shown[("ordered_constrained-a", 0)][0] == f"Write it.\n\n[decoded under the grammar]\n{g}"
    )
    assert shown[("ordered-a", 0)] == ("Write it.", "A dog.")


# -- forced answers from a server: checked against their grammar, and never mixed with free ones ------
KEY = "sk-constrained-test-51d0"


def concept_sentence(body):
    """What a server that applies the regex may answer: the concepts of the prompt (template 0's
    "Concepts: a b c d" line), in order, capitalised, with a stop: a sentence every grammar admits."""
    words = body["messages"][-1]["content"].split("\n")[0].split(": ", 1)[1]
    return words[0].upper() + words[1:] + "."


def chat_answer(content):
    from tests.generation.hostile_http import completion

    return 200, {"Content-Type": "application/json"}, json.dumps(completion(content)).encode(), 0


@pytest.fixture
def server():
    """A server on 127.0.0.1 whose answer comes from server.answer(body, n) (n: requests so far)."""
    from tests.generation.scripted_server import ScriptedServer

    class Server(ScriptedServer):
        answer = staticmethod(lambda body, n: chat_answer(concept_sentence(body)))

    s = Server(lambda body, headers: s.answer(body, len(s.bodies)))
    yield s
    s.close()


def cli(capsys, *argv):
    from ocg.cli import main

    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def forced_run(tmp_path, capsys, monkeypatch, url, *extra):
    monkeypatch.setenv("OCG_CONSTRAINED_KEY", KEY)
    models = tmp_path / "models.yaml"
    models.write_text(
        json.dumps(
            {
                "models": {
                    "m": {
                        "id": "local-model",
                        "backend": "openai",
                        "max_new_tokens": 32,
                        "batch_size": 8,
                        "api": {
                            "base_url": url,
                            "key_env": "OCG_CONSTRAINED_KEY",
                            "concurrency": 2,
                            "timeout_s": 5,
                            "backoff_s": 0.05,
                            "max_retries": 0,
                        },
                    }
                }
            }
        )
    )
    return cli(
        capsys,
        "generate",
        "m",
        "--models-file",
        models,
        "--conditions",
        "ordered_constrained",
        "--subset-k",
        1,
        "--templates",
        0,
        "--out",
        tmp_path / "gen",
        *extra,
    )


def test_a_server_that_ignores_the_regex_stops_the_run_naming_it(
    tmp_path, capsys, monkeypatch, server
):
    """vLLM before 0.10.2 ignores `structured_outputs`: its free answers must not be stored as forced."""
    server.answer = lambda body, n: chat_answer(
        concept_sentence(body) if n <= 8 else "A dog, happily."
    )
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        f"ocg: error: {server.url}/chat/completions (model 'local-model' of entry 'm'): 8 of 8 answers"
        in err
    )
    assert (
        "not in their grammar, e.g. instance ordered_constrained-t0-" in err
        and "'A dog, happily.'" in err
    )
    assert "api.regex_param: guided_regex" in err
    df = read_generations(tmp_path / "gen" / "m")
    assert len(df) == 8 and all(
        re.fullmatch(r.grammar, r.raw) for r in df.itertuples()
    )  # the first batch stays
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert card["status"] == "failed" and card["runs"][-1]["error"].startswith("NotForced: ")


def test_a_cut_answer_must_be_the_start_of_an_admitted_sentence(
    tmp_path, capsys, monkeypatch, server
):
    server.answer = lambda body, n: (
        200,
        {"Content-Type": "application/json"},
        json.dumps(completion_cut("The dog and the" if n % 2 else "A dog. Then more")).encode(),
        0,
    )
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    assert code == 1 and "4 of 8 answers of this batch are not in their grammar" in err, err
    assert "(finish_reason 'length'): 'A dog. Then more'" in err


def test_an_empty_answer_cut_by_the_budget_is_not_forced(tmp_path, capsys, monkeypatch, server):
    """The empty text starts every sentence of the grammar, yet a decoder that spent its budget
    under the grammar wrote something: an empty `length` answer is refused, not stored as forced."""
    from ocg.generation.backends.constrained import forced_as_asked, not_forced

    grammar = ordered_regex(["dog", "run"], ["N", "V"])
    assert not forced_as_asked("", grammar, "length") and not forced_as_asked("", grammar, None)
    assert forced_as_asked("The dog", grammar, "length")  # a cut start is still admitted
    assert not_forced([("k", grammar, "", "length"), ("j", grammar, "The dog", "length")]) == ["k"]
    server.answer = lambda body, n: (
        200,
        {"Content-Type": "application/json"},
        json.dumps(completion_cut("")).encode(),
        0,
    )
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    assert code == 1 and "8 of 8 answers of this batch are not in their grammar" in err, err
    assert "(finish_reason 'length'): ''" in err


def completion_cut(content):
    from tests.generation.hostile_http import completion

    return completion(content, finish_reason="length")


def templates_without_constraint(tmp_path, monkeypatch):
    """params/templates.yaml with `ordered_constrained` left free, read by every load_templates()."""
    from ocg.core.paths import TEMPLATES_FILE
    from ocg.data import load_templates

    path = tmp_path / "templates.yaml"
    text = TEMPLATES_FILE.read_text().replace(", constraint: ordered_regex}", "}")
    assert text != TEMPLATES_FILE.read_text()
    path.write_text(text)
    monkeypatch.setattr(load_templates, "__defaults__", (path,))


def test_a_resumed_forced_condition_refuses_to_go_on_free(tmp_path, capsys, monkeypatch, server):
    """Stopped after 8 of 24 forced answers, the constraint removed: not 16 free answers added."""
    server.answer = lambda body, n: (
        chat_answer(concept_sentence(body)) if n <= 8 else (404, {}, b"{}", 0)
    )
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    assert code == 1 and len(read_generations(tmp_path / "gen" / "m")) == 8, err
    server.answer = lambda body, n: chat_answer(concept_sentence(body))
    templates_without_constraint(tmp_path, monkeypatch)
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    card = tmp_path / "gen" / "m" / "run_card.json"
    assert code == 2 and err.startswith(
        f"ocg: error: {card}: constrained.ordered_constrained: this condition was "
        "forced to a grammar, and none is built now"
    ), err
    df = read_generations(tmp_path / "gen" / "m")
    assert len(df) == 8 and df.grammar.notna().all()  # nothing free was added


def test_a_free_condition_refuses_to_go_on_forced(tmp_path, capsys, monkeypatch, server):
    server.answer = lambda body, n: (
        chat_answer(concept_sentence(body)) if n <= 8 else (404, {}, b"{}", 0)
    )
    with monkeypatch.context() as m:
        templates_without_constraint(tmp_path, m)
        assert forced_run(tmp_path, capsys, monkeypatch, server.url)[0] == 1
    server.answer = lambda body, n: chat_answer(concept_sentence(body))
    code, err = forced_run(tmp_path, capsys, monkeypatch, server.url)
    assert (
        code == 2 and "constrained.ordered_constrained: this condition was decoded freely" in err
    ), err
    assert len(read_generations(tmp_path / "gen" / "m")) == 8


def test_records_on_disk_are_checked_against_the_grammar_built_now(tmp_path):
    """The record checks behind the card's: a forced record when none is forced now, a free one
    when one is, and a forced answer its grammar does not admit (stored before ocg checked)."""
    from ocg.generation.answer_store.store import GenerationStore
    from ocg.generation.run_card import check_grammars

    g = ordered_regex(CONCEPTS, POS)
    base = {
        "condition": "ordered_constrained",
        "template_id": 0,
        "set_id": "s",
        "perm_index": 0,
        "concepts": CONCEPTS,
        "pos_pattern": POS,
        "answer_status": "ok",
        "finish_reason": "stop",
    }

    def store(**fields):
        path = tmp_path / f"s{len(list(tmp_path.iterdir()))}" / "ordered_constrained.jsonl"
        path.parent.mkdir()
        path.write_text(json.dumps({"instance_id": "i", **base, **fields}) + "\n")
        return GenerationStore(path)

    forced = store(answer="Dog frisbee catch throw.", raw="Dog frisbee catch throw.", grammar=g)
    check_grammars(forced, {"i": g})
    with pytest.raises(
        OcgInputError, match=r"\.jsonl:1: instance i was forced to a grammar, and none is built now"
    ):
        check_grammars(forced, None)
    with pytest.raises(
        OcgInputError, match=r"instance i was decoded freely, and a grammar is built now"
    ):
        check_grammars(store(answer="A dog.", raw="A dog."), {"i": g})
    with pytest.raises(
        OcgInputError, match=r"instance i's answer is not in its grammar: it was never forced"
    ):
        check_grammars(store(answer="A dog.", raw="A dog.", grammar=g), {"i": g})
    check_grammars(store(answer="A dog.", raw="A dog."), None)  # free then, free now


@pytest.mark.parametrize("command", ["report", "sweep"])
def test_a_run_file_forcing_a_grammar_on_a_replay_model_is_refused_before_any_work(
    tmp_path, capsys, outputs, command
):
    """Refused where the run or sweep file is checked, not in notebook 01 after the data are built."""
    models = tmp_path / "models.yaml"
    models.write_text(
        json.dumps(
            {
                "models": {
                    "synth": {"backend": "replay", "id": "synth", "replay": {}},
                    "hf": {"id": "HuggingFaceTB/SmolLM2-135M-Instruct"},
                }
            }
        )
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        json.dumps(
            {
                "name": "forced-replay",
                "models_file": str(models),
                "models": ["hf", "synth"],
                "conditions": ["ordered", "ordered_constrained"],
                "subset_k": 1,
                **({"outputs": str(outputs / "sweep")} if command == "sweep" else {}),
            }
        )
    )
    code, err = cli(capsys, command, run, *(["--status"] if command == "sweep" else []))
    assert code == 2 and err.startswith(
        f"ocg: error: {run}: conditions[1]: 'ordered_constrained' forces a grammar "
        "at decoding time; model 'synth' has the replay backend"
    ), err
    assert not outputs.exists() or not any(outputs.rglob("*.ipynb"))


def forms_benchmark():
    from tests.helpers import benchmark

    module = benchmark("forced_forms")
    return module, json.loads(module.RESULTS.read_text())


def test_methods_states_the_forms_the_grammar_builds_now():
    """The stored figures are today's grammar's (no tagger needed), and METHODS quotes them."""
    from ocg.core.paths import PROJECT_ROOT

    module, stored = forms_benchmark()
    assert module.bare_concepts() == stored["concepts"]
    methods = " ".join((PROJECT_ROOT / "docs" / "METHODS.md").read_text().split())
    four, five = stored["concepts"]["4_concepts"], stored["concepts"]["5_concepts"]
    assert (
        f"of the {four['distinct_concepts']} distinct concepts of the four-concept sets, "
        f"{len(four['bare_word_only_v1'])} admitted only the bare word"
    ) in methods
    assert f"{len(four['bare_word_only_now'])} do now: music, sand, sheep and stuff" in methods
    assert four["bare_word_only_now"] == ["music_N", "sand_N", "sheep_N", "stuff_N"]
    assert (
        f"{len(five['bare_word_only_v1'])} did and {len(five['bare_word_only_now'])} do now: "
        + ", ".join(w.removesuffix("_N") for w in five["bare_word_only_now"])
        in methods
    )
    gap = stored["gap"]
    assert (
        f"{gap['admitted_sentences']:,} such sentences the matcher rejects the probed concept in {gap['rejected']}"
        in methods
    )
    for context, words in [
        ("bare", "bare"),
        ("after 'the'", 'after "the"'),
        ("after an adjective ('big')", 'after "big"'),
        ("after a pronoun ('they')", 'after "they"'),
    ]:
        c = stored["gap"]["by_context"][context]
        assert f"{words} {c['rejected']} of {c['admitted']:,}" in methods, context


@pytest.mark.slow
def test_the_stored_gap_between_grammar_and_matcher_is_todays():
    module, stored = forms_benchmark()
    assert module.gap() == stored["gap"]


def test_an_entry_sending_guided_regex_is_told_the_other_field(
    tmp_path, capsys, monkeypatch, server
):
    server.answer = lambda body, n: chat_answer("A dog, happily.")
    monkeypatch.setenv("OCG_CONSTRAINED_KEY", KEY)
    models = tmp_path / "models.yaml"
    models.write_text(
        json.dumps(
            {
                "models": {
                    "m": {
                        "id": "local-model",
                        "backend": "openai",
                        "max_new_tokens": 32,
                        "batch_size": 8,
                        "api": {
                            "base_url": server.url,
                            "key_env": "OCG_CONSTRAINED_KEY",
                            "regex_param": "guided_regex",
                            "max_retries": 0,
                        },
                    }
                }
            }
        )
    )
    code, err = cli(
        capsys,
        "generate",
        "m",
        "--models-file",
        models,
        "--conditions",
        "ordered_constrained",
        "--subset-k",
        1,
        "--templates",
        0,
        "--permutations",
        2,
        "--out",
        tmp_path / "gen",
    )
    assert (
        code == 1
        and "sent as `guided_regex`: set the entry's `api.regex_param: structured_outputs`" in err
    ), err
    assert (
        "guided_regex" in server.bodies[0]
        and not (tmp_path / "gen" / "m" / "ordered_constrained.jsonl").exists()
    )
