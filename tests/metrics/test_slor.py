"""SLOR (metrics/slor.py) against a direct computation on a few sentences with a tiny GPT-2: the
LM's summed token log probabilities (one text at a time, no padding) minus the words' wordfreq log
frequencies, per token; read from perplexity's cache, so the LM runs once; missing with the reason
where perplexity is. And the non-word share (metrics/nonword.py)."""

import math

import pandas as pd
import pytest

from ocg.metrics import nonword, slor
from ocg.scoring import load_scoring_config, neural

SENTENCES = [
    "The dog catches a frisbee in the park.",
    "A man rides his bike down the street.",
    "Children throw snowballs at each other after school.",
    "The chef pours sauce over the pasta.",
]
CONFIG = load_scoring_config(perplexity_model="tiny", perplexity_batch_size=3)


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
    uni = sum(math.log(wordfreq.word_frequency(w, "en", minimum=1e-9)) for w in words)
    first_word_tokens = len(
        tokenizer(text.split()[0])["input_ids"]
    )  # the first token's share is not scored
    uni -= math.log(wordfreq.word_frequency(words[0], "en", minimum=1e-9)) / first_word_tokens
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
    shares = slor.token_unigrams(text, [(0, 1), (1, 5), (5, 9), (9, 13)])
    assert shares[0] == pytest.approx(slor.word_logprob("a"))
    assert shares[1] == pytest.approx(slor.word_logprob("fun"))
    assert (
        shares[2] == shares[3] == pytest.approx(math.log(slor.FLOOR) / 2)
    )  # unknown: the floor, halved


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
