"""ocg's own perplexity (metrics/lm_nll.py) equals lmppl's on real answers, batched with padding,
and a per-text unbatched reference (the model's own loss) on any transformers; the guards give the
same statuses. On transformers 5 (lmppl cannot load models there) the lmppl half is skipped."""

import math

import pytest

from ocg.metrics import perplexity
from ocg.metrics.lm_nll import context_limit, load_ocg_lm
from tests.metrics.tiny_gpt2 import real_answers

pytestmark = [pytest.mark.slow, pytest.mark.tf4]  # a tiny GPT-2 and the embedded model

TEXTS = [*real_answers(), "", "   ", None, "a", "word " * 40]


def unbatched_reference(texts, lm) -> dict[str, float]:
    """exp of the model's own mean loss, one text at a time (no padding, no masking of ours)."""
    import torch

    limit, out = context_limit(lm.model, lm.tokenizer), {}
    for t in texts:
        ids = torch.tensor([lm.tokenizer(t, truncation=True, max_length=limit)["input_ids"]])
        with torch.inference_mode():
            out[t] = math.exp(lm.model(input_ids=ids, labels=ids).loss.item())
    return out


def max_relative_difference(a: dict, b: dict, texts) -> float:
    return max(abs(a[t] - b[t]) / abs(b[t]) for t in texts)


def check_against_references(path, expect_truncated: bool) -> dict:
    lm = load_ocg_lm(str(path), "cpu")
    ppl, status = perplexity.compute_perplexity(TEXTS, lm.model, lm.tokenizer, batch_size=8)
    assert status[""] == status["   "] == "empty" and math.isnan(ppl[""])
    assert status["a"] == "too_short" and math.isnan(ppl["a"])
    assert (status["word " * 40] == "truncated") is expect_truncated
    scored = [t for t in ppl if status[t] in ("ok", "truncated")]
    assert len(scored) == 41 and all(1 < ppl[t] < math.inf for t in scored)
    assert len({len(lm.tokenizer(t)["input_ids"]) for t in scored}) > 10  # batches carry padding
    diffs = {"unbatched": max_relative_difference(ppl, unbatched_reference(scored, lm), scored)}
    assert diffs["unbatched"] < 1e-5
    if perplexity.implementation() == "lmppl":  # transformers 4.x: the paper's tool, side by side
        lmppl_values, lmppl_status = perplexity.score_perplexity(
            TEXTS, perplexity.load_lm(str(path), "lmppl"), 8
        )
        assert lmppl_status == status
        diffs["lmppl"] = max_relative_difference(ppl, lmppl_values, scored)
        assert diffs["lmppl"] < 1e-5
    return diffs


def test_ocg_perplexity_equals_lmppl_and_the_unbatched_loss_on_a_tiny_gpt2(tiny_lm):
    print("max relative difference", check_against_references(tiny_lm, expect_truncated=True))


def test_ocg_perplexity_equals_lmppl_and_the_unbatched_loss_on_smollm2():
    from ocg.weights.embedded import ensure_converted

    print(
        "max relative difference",
        check_against_references(ensure_converted("smollm2-135m-instruct"), expect_truncated=False),
    )


def test_scoring_uses_the_chosen_implementation(tiny_lm, monkeypatch):
    monkeypatch.setattr(perplexity, "implementation", lambda: "ocg")
    assert isinstance(perplexity.load_lm(str(tiny_lm)), perplexity.OcgLM)
