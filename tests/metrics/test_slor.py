"""SLOR (metrics/slor.py) against a direct computation on a few sentences with a tiny GPT-2: the
LM's summed token log probabilities (one text at a time, no padding) minus the words' wordfreq log
frequencies, per token; read from perplexity's cache, so the LM runs once; missing with the reason
where perplexity is. And the non-word share (metrics/nonword.py)."""

import math

import pandas as pd
import pytest

from ocg.core.paths import COMMONGEN_EVAL_5CONCEPT
from ocg.metrics import nonword, slor
from ocg.scoring import load_scoring_config, neural

SENTENCES = [
    "The dog catches a frisbee in the park.",
    "A man rides his bike down the street.",
    "Children throw snowballs at each other after school.",
    "The chef pours sauce over the pasta.",
]
CONFIG = load_scoring_config(overrides=dict(perplexity_model="tiny", perplexity_batch_size=3))


def direct_slor(text: str, path) -> float:
    """(ln P_LM - ln P_uni) / T over the tokens after the first, computed plainly."""
    import torch
    import wordfreq
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer, model = (
        AutoTokenizer.from_pretrained(path),
        AutoModelForCausalLM.from_pretrained(path),
    )
    ids = tokenizer(text)["input_ids"]
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
    lm = sum(logp[i - 1, ids[i]].item() for i in range(1, len(ids)))
    words = wordfreq.tokenize(text, "en")
    uni = sum(math.log(wordfreq.word_frequency(w, "en")) for w in words)  # all listed
    first_word_tokens = len(
        tokenizer(text.split()[0])["input_ids"]
    )  # the first token's share is not scored
    uni -= math.log(wordfreq.word_frequency(words[0], "en")) / first_word_tokens
    return (lm - uni) / (len(ids) - 1)


@pytest.mark.slow
def test_slor_equals_a_direct_computation_and_reads_perplexitys_cache(
    tiny_lm, tmp_path, monkeypatch
):
    texts = pd.Series(SENTENCES + ["", SENTENCES[0]])
    from ocg.weights import hub

    used, cache = (str(tiny_lm), str(tiny_lm), None), tmp_path / "c.parquet"
    key = {
        "version": 2,
        "implementation": "ocg",
        "revision": hub.revision(str(tiny_lm)),
    }  # as the family's key
    ppl, _ = neural.perplexities(texts, CONFIG, used, key, cache, False, print)
    monkeypatch.setattr(
        "ocg.metrics.perplexity.load_lm", lambda *a, **k: pytest.fail("the LM ran twice")
    )
    out, block = neural.slor_scores(texts, CONFIG, used, key, cache, False, print)
    assert (
        block["status"] == "ok"
        and math.isnan(out["slor"].iloc[4])
        and out["slor"].iloc[5] == out["slor"].iloc[0]
    )
    for i, text in enumerate(SENTENCES):
        assert out["slor"].iloc[i] == pytest.approx(direct_slor(text, tiny_lm), abs=1e-4)


def test_slor_is_missing_with_the_reason_where_perplexity_is(tmp_path):
    out, block = neural.slor_scores(
        pd.Series(["A dog."]),
        CONFIG,
        (None, None, "gpt2-xl: not in the cache"),
        {"version": 2},
        tmp_path / "c.parquet",
        False,
        lambda m: None,
    )
    assert (
        math.isnan(out["slor"].iloc[0])
        and block["status"] == "missing"
        and "gpt2-xl" in block["reason"]
    )


def test_a_words_unigram_log_probability_is_spread_over_its_tokens():
    text = "a fun andenge"
    offsets = [(0, 1), (1, 5), (5, 9), (9, 13)]
    shares, last = slor.token_unigrams(text, offsets)
    assert shares[0] == pytest.approx(math.log(wordfreq_frequency("a")))
    assert shares[1] == pytest.approx(math.log(wordfreq_frequency("fun")))
    assert shares[2] == shares[3] == 0.0  # unknown to wordfreq: probability 1, no credit
    assert last == [0, 1, 3]
    floored, _ = slor.token_unigrams(text, offsets, slor.FLOOR)  # the former rule
    assert floored[2] == floored[3] == pytest.approx(math.log(slor.FLOOR) / 2)
    assert slor.unigram_of_scored(text, offsets) == (pytest.approx(shares[1]), 3, 2)


def wordfreq_frequency(word: str) -> float:
    import wordfreq

    return wordfreq.word_frequency(word, "en")


def test_an_unknown_word_never_raises_slor_and_per_word_divides_by_words():
    """With any perplexity, a word wordfreq lacks adds nothing to the unigram term (the former
    floor added 20.7 nats of credit); per word divides the same sum by the words scored."""
    text, offsets = "The dog blorvacks.", [(0, 3), (3, 7), (7, 10), (10, 17), (17, 18)]
    v = slor.slor_variants(text, 50.0, offsets)
    lm = -math.log(50.0) * 4
    uni = math.log(wordfreq_frequency("dog"))  # "blorvacks" gets nothing
    assert v["slor"] == pytest.approx((lm - uni) / 4)
    assert v["slor_per_word"] == pytest.approx((lm - uni) / 2)
    assert v["slor_oov_floor"] - v["slor"] == pytest.approx(-math.log(slor.FLOOR) / 4)


INVENTED = ["blorvack", "snarfle", "quindlet", "zembrow", "trosk"]


def concept_replaced(n: int) -> list[tuple[str, str]]:
    """The first `n` CommonGen-Eval five-concept outputs (real LLM sentences) that hold a concept
    word as written, each beside itself with that word replaced by an invented one."""
    import json
    import re

    fixture = COMMONGEN_EVAL_5CONCEPT
    pairs: list[tuple[str, str]] = []
    for line in fixture.read_text().splitlines():
        row = json.loads(line)
        for concept in row["concept_set"]:
            m = re.search(rf"\b{concept.split('_')[0]}\b", row["output"])
            if m and row["output"] not in dict(pairs):
                word = INVENTED[len(pairs) % len(INVENTED)]
                pairs.append(
                    (row["output"], row["output"][: m.start()] + word + row["output"][m.end() :])
                )
                break
        if len(pairs) == n:
            return pairs
    return pairs


@pytest.mark.slow
def test_real_sentences_lose_slor_when_a_concept_becomes_an_invented_word():
    """On the embedded SmolLM2: every sentence drops, by more than half a nat per token; under the
    former floor (20.7 nats of credit for the invented word) the drop was far smaller."""
    from ocg.metrics.lm_nll import context_limit, load_ocg_lm
    from ocg.metrics.perplexity import compute_perplexity
    from ocg.weights.embedded import ensure_converted

    assert all(wordfreq_frequency(w) == 0 for w in INVENTED)
    pairs = concept_replaced(20)
    assert len(pairs) == 20
    lm = load_ocg_lm(str(ensure_converted("smollm2-135m-instruct")), "cpu")
    texts = [t for pair in pairs for t in pair]
    ppl, _ = compute_perplexity(texts, lm.model, lm.tokenizer, batch_size=8)
    v = slor.slor_values(texts, ppl, lm.tokenizer, context_limit(lm.model, lm.tokenizer))
    drops = {k: [v[a][k] - v[b][k] for a, b in pairs] for k in slor.VARIANTS}
    print({k: (min(d), sum(d) / len(d)) for k, d in drops.items()})
    assert min(drops["slor"]) > 0.5 and min(drops["slor_per_word"]) > 0.5
    assert sum(drops["slor"]) > 1.5 * sum(drops["slor_oov_floor"])


@pytest.mark.parametrize(
    ("text", "concepts", "found"),
    [
        ("The kid has a fun andenge.", ["kid", "fun"], ["andenge"]),
        ("The skateboarder unicycles past Xiaoming.", ["skateboarder"], []),  # rare, yet listed
        ("Two andenges roll.", ["andenge", "roll"], []),  # a form of a concept no lexicon knows
        ("A dog andenges.", ["dog"], ["andenges"]),
        ("", ["dog"], []),
        (None, ["dog"], []),
    ],
)
def test_a_nonword_is_unknown_to_both_lexicons_and_no_form_of_a_concept(text, concepts, found):
    assert nonword.nonwords(text, concepts, "V" * len(concepts)) == found
