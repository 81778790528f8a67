"""Perplexity's batches are planned by a token budget (metrics/lm_nll.py, `plan_batches`): at most
`batch_size` texts and TOKEN_BUDGET padded tokens, a longer text alone, so one long answer costs
its own length; answers of ordinary length batch as before, and their values are bit for bit the
old batching's."""

import math

import pytest

from ocg.metrics import lm_nll, perplexity
from ocg.metrics.lm_nll import TOKEN_BUDGET, batch_nll, context_limit, load_ocg_lm, plan_batches
from tests.metrics.tiny_gpt2 import real_answers


def old_plan(n: int, batch_size: int) -> list[range]:
    """The former plan: chunks of `batch_size` of the texts sorted by length, whatever their length."""
    return [range(s, min(s + batch_size, n)) for s in range(0, n, batch_size)]


def test_ordinary_answers_batch_as_before():
    lengths = sorted([12, 30, 17, 25, 128, 64, 40] * 15)  # 105 answers, none over 128 tokens
    assert plan_batches(lengths, 32) == old_plan(len(lengths), 32)
    assert 32 * 128 <= TOKEN_BUDGET


def test_a_long_text_is_alone_and_no_batch_exceeds_the_budget():
    lengths = [*sorted([14, 20, 18, 25] * 6)[:23], 6500]  # 23 short answers and one very long one
    plan = plan_batches(lengths, 32)
    assert plan[-1] == range(23, 24)  # the long text alone
    assert sum(len(b) for b in plan) == 24 and plan[0].start == 0
    assert all(b.start == a.stop for a, b in zip(plan, plan[1:]))  # consecutive, nothing lost
    for b in plan:
        assert len(b) <= 32
        assert len(b) == 1 or len(b) * lengths[b.stop - 1] <= TOKEN_BUDGET
    budgeted = plan_batches([100] * 10 + [1000] * 5, 32, budget=2000)
    assert [len(b) for b in budgeted] == [10, 2, 2, 1]


def test_guarded_hands_values_one_planned_batch_at_a_time():
    class Words:  # a tokenizer of one token per word
        def __call__(self, text, add_special_tokens=True):
            return {"input_ids": text.split()}

    texts = [f"w{i} x" for i in range(5)] + ["long " * 3000]
    seen = []

    def values(batch):
        seen.append(len(batch))
        return [float(len(t)) for t in batch]

    ppl, status = lm_nll.guarded(texts, Words(), 10_000, values, batch_size=4)
    assert seen == [4, 1, 1]  # two-token texts by 4, then the 3,000-token one alone
    assert ppl[texts[-1]] == len(texts[-1]) and status[texts[-1]] == "ok"


@pytest.mark.slow  # a tiny GPT-2
def test_budget_batching_gives_the_old_batchings_values_bit_for_bit(tiny_lm):
    lm = load_ocg_lm(str(tiny_lm), "cpu")
    texts = real_answers(40)
    limit = context_limit(lm.model, lm.tokenizer)
    ppl, status = perplexity.compute_perplexity(texts, lm.model, lm.tokenizer, batch_size=8)
    order = sorted(texts, key=lambda t: (len(lm.tokenizer(t)["input_ids"]), t))
    old = []
    for b in old_plan(len(order), 8):  # the former code: chunks of 8 of the sorted texts
        old += batch_nll(order[b.start : b.stop], lm.model, lm.tokenizer, "cpu", limit)
    assert [ppl[t] for t in order] == [math.exp(v) for v in old]  # bit for bit
    alone = {t: math.exp(batch_nll([t], lm.model, lm.tokenizer, "cpu", limit)[0]) for t in order}
    assert max(abs(ppl[t] - alone[t]) / alone[t] for t in order) < 1e-5
    assert {status[t] for t in texts} == {"ok", "truncated"}  # the longest are cut to the context


@pytest.mark.slow  # a tiny GPT-2
def test_no_forward_pass_exceeds_the_budget_and_values_stay(tiny_lm, monkeypatch):
    lm = load_ocg_lm(str(tiny_lm), "cpu")
    texts = real_answers(40)
    before, _ = perplexity.compute_perplexity(texts, lm.model, lm.tokenizer, batch_size=40)
    shapes = []
    forward = lm.model.forward

    def spy(*args, **kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", spy)
    monkeypatch.setattr(lm_nll, "TOKEN_BUDGET", 60)
    monkeypatch.setattr(lm_nll, "LOSS_ROWS", 7)  # the loss in slices: the same values
    after, _ = perplexity.compute_perplexity(texts, lm.model, lm.tokenizer, batch_size=40)
    assert len(shapes) > 1 and all(rows == 1 or rows * width <= 60 for rows, width in shapes)
    assert max(abs(after[t] - before[t]) / before[t] for t in texts) < 1e-5


def whole_logits_nll(texts, model, tokenizer, limit):
    """The reference: every position's logits at once, as the model's own forward gives them."""
    import torch

    ids = [tokenizer(t, truncation=True, max_length=limit)["input_ids"] for t in texts]
    out = []
    with torch.inference_mode():
        for i in ids:
            logits = model(input_ids=torch.tensor([i])).logits[0, :-1].float()
            out.append(torch.nn.functional.cross_entropy(logits, torch.tensor(i[1:])).item())
    return out


@pytest.mark.slow  # a tiny GPT-2
def test_the_output_layer_runs_a_slice_at_a_time_and_gives_the_whole_logits_values(tiny_lm):
    """No call of the output layer sees more than LOSS_ROWS positions (a context-length answer no
    longer holds its whole tokens x vocabulary logits), and each text's NLL is the one its whole
    logits give, for any batch of texts and any slice size."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    lm = load_ocg_lm(str(tiny_lm), "cpu")
    limit = context_limit(lm.model, lm.tokenizer)
    answers = real_answers(60)
    head = lm.model.get_output_embeddings()
    seen: list[int] = []
    hook = head.register_forward_hook(lambda m, args, out: seen.append(args[0].shape[-2]))

    @settings(max_examples=30, deadline=None)
    @given(
        texts=st.lists(st.sampled_from(answers), min_size=1, max_size=6, unique=True),
        rows=st.integers(1, 70),
    )
    def check(texts, rows):
        seen.clear()
        original, lm_nll.LOSS_ROWS = lm_nll.LOSS_ROWS, rows
        try:
            values = batch_nll(texts, lm.model, lm.tokenizer, "cpu", limit)
        finally:
            lm_nll.LOSS_ROWS = original
        assert len(seen) > 2 and max(seen[2:]) <= rows  # the probe's two calls, then slices
        reference = whole_logits_nll(texts, lm.model, lm.tokenizer, limit)
        assert max(abs(a - b) / b for a, b in zip(values, reference)) < 1e-6  # float32 rounding

    try:
        check()
    finally:
        hook.remove()


@pytest.mark.slow  # a tiny GPT-2
def test_a_model_that_changes_its_logits_after_the_output_layer_is_run_whole(tiny_lm, monkeypatch):
    """Scaled logits (Cohere's `logit_scale`, Granite's `logits_scaling`) are not the output
    layer's: the probe sees it, and the NLL is the one the model's own logits give."""
    import torch

    lm = load_ocg_lm(str(tiny_lm), "cpu")
    limit = context_limit(lm.model, lm.tokenizer)
    forward = lm.model.forward

    def scaled(*args, **kwargs):
        out = forward(*args, **kwargs)
        out.logits = out.logits * 30.0  # the tiny random model's logits are near 0
        return out

    monkeypatch.setattr(lm.model, "forward", scaled)
    texts = real_answers(8)
    probe = torch.tensor([lm.tokenizer(texts[-1])["input_ids"]])
    assert lm_nll.output_layer(lm.model, probe, torch.ones_like(probe)) is None
    values = batch_nll(texts, lm.model, lm.tokenizer, "cpu", limit)
    reference = whole_logits_nll(texts, lm.model, lm.tokenizer, limit)
    assert max(abs(a - b) / b for a, b in zip(values, reference)) < 1e-6
    monkeypatch.setattr(lm.model, "forward", forward)
    plain = batch_nll(texts, lm.model, lm.tokenizer, "cpu", limit)
    assert max(abs(a - b) / b for a, b in zip(values, plain)) > 1e-2  # the scale did change them
