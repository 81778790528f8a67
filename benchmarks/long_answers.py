"""What one very long answer costs perplexity and SLOR (docs/METHODS.md, "Perplexity").

    .venv/bin/python benchmarks/long_answers.py [--words 5000] [--answers 24]
    .venv/bin/python benchmarks/long_answers.py --smoke [--results DIR]   # seconds: 40 words, 2 answers

Scores 24 answers, 23 one-sentence answers and one of 5,000 words (a word salad of common
words, as a runaway model writes), with perplexity and SLOR on the embedded model (SmolLM2-135M,
float32, CPU), the way scoring does: `perplexity.score_perplexity` at the scoring file's batch
size (params/scoring.yaml), then `slor.slor_values` from those perplexities. Batches are planned
by a token budget (`lm_nll.plan_batches`: at most `batch_size` texts and TOKEN_BUDGET padded
tokens, a longer text alone), so the long answer costs its own length; before, it was padded
into a batch of 32 (>10 GB and >10 minutes). Prints the wall time of each step, the peak
resident memory of the process (ru_maxrss) and the plan's batches. Targets on the 2-core
machine: under 2 minutes and under 3 GB. The machine is shared: the run records its load.
"""

from __future__ import annotations

import argparse
import math
import random
import resource
import time

from recording import add_smoke_options, record, use_results

from ocg.metrics import perplexity, slor
from ocg.metrics.lm_nll import TOKEN_BUDGET, context_limit, plan_batches
from ocg.scoring import load_scoring_config

WORDS = (
    "the dog caught a frisbee in the park while children ran across the green field near an old "
    "tree and a man threw the ball to his friend before the rain began"
).split()
SHORT = [
    "The dog caught the frisbee in the park.",
    "A boy throws the ball and the dog jumps to catch it.",
    "She cut the bread with a knife before dinner.",
    "The chef uses a sharp knife to cut the onion.",
    "Children run across the field to catch the kite.",
    "He sat on the bench and ate an apple.",
]


def answers(n: int, words: int, seed: int = 0) -> list[str]:
    """n - 1 distinct one-sentence answers and one of `words` words."""
    rng = random.Random(seed)
    short = [f"{SHORT[i % len(SHORT)][:-1]} on day {i + 1}." for i in range(n - 1)]
    long = " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."
    return [*short[: n // 2], long, *short[n // 2 :]]


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=5000, help="words of the long answer")
    parser.add_argument("--answers", type=int, default=24, help="answers in all")
    add_smoke_options(parser, "--words 40 --answers 2")
    args = parser.parse_args()
    use_results(args)
    if args.smoke:
        args.words, args.answers = 40, 2
    config = load_scoring_config()
    texts = answers(args.answers, args.words)
    start = time.perf_counter()
    _, path, _ = perplexity.resolve_model("embedded:smollm2-135m-instruct", None)
    lm = perplexity.load_lm(path)
    loaded = time.perf_counter()
    tokenizer = lm.tokenizer
    limit = context_limit(lm.model, tokenizer)
    lengths = sorted(min(len(tokenizer(t)["input_ids"]), limit) for t in texts)
    plan = plan_batches(lengths, config.perplexity_batch_size)
    ppl, status = perplexity.score_perplexity(texts, lm, config.perplexity_batch_size)
    scored = time.perf_counter()
    slors = slor.slor_values(texts, ppl, tokenizer, limit)
    done = time.perf_counter()
    long = max(texts, key=len)
    figures = {
        "answers": len(texts),
        "long_answer_words": len(long.split()),
        "long_answer_tokens": len(tokenizer(long)["input_ids"]),
        "context_tokens": limit,
        "long_answer_status": status[long],
        "batch_size": config.perplexity_batch_size,
        "token_budget": TOKEN_BUDGET,
        "batches": [len(b) for b in plan],
        "load_s": round(loaded - start, 1),
        "perplexity_s": round(scored - loaded, 1),
        "slor_s": round(done - scored, 1),
        "wall_s": round(done - start, 1),
        "peak_rss_mb": peak_rss_mb(),
        "all_finite": all(math.isfinite(ppl[t]) and math.isfinite(slors[t]["slor"]) for t in texts),
        "long_answer_perplexity": round(ppl[long], 3),
        "target_wall_s": 120,
        "target_peak_rss_mb": 3072,
    }
    print(
        f"{len(texts)} answers (one of {figures['long_answer_words']:,} words, "
        f"{figures['long_answer_tokens']:,} tokens, {status[long]}): batches {figures['batches']}; "
        f"perplexity {figures['perplexity_s']} s, SLOR {figures['slor_s']} s, "
        f"wall {figures['wall_s']} s (model load included); peak RSS {figures['peak_rss_mb']:,} MB"
    )
    record("long_answers", figures, vars(args))


if __name__ == "__main__":
    main()
