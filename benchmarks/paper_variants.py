"""Bare `model.generate` and the library's faster paths, timed on ocg's batches (gpu_paper_shapes.py).

Each variant runs the same rendered prompts twice (first pass: new shapes; second: shapes seen) on
the weights ocg's backend loaded, every answer forced to the budget (min_new_tokens), and counts the
answers that differ from ocg's. Adoption into ocg is left to a GPU run's figures (docs/METHODS.md).
    padded          bare generate, prompts padded to a multiple of 8 (ocg's CUDA default pad_multiple)
    static          a static KV cache (cache_implementation="static"); transformers compiles the
                    forward with torch.compile on CUDA only, so on the CPU this is the cache alone
    generate_batch  transformers' continuous batching (paged attention), all prompts in one call
"""

from __future__ import annotations

import time

VARIANTS = ("padded", "static", "generate_batch")


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def bare_answers(
    backend, plan: list[list[str]], tokens: int, pad_multiple: int | None = None, **generate_kwargs
) -> dict:
    """Greedy answers of `tokens` tokens to each batch of prompts, in plan order, and the seconds."""
    import torch

    model, tok = backend.model, backend.tokenizer
    texts, t0 = [], time.perf_counter()
    for batch in plan:
        enc = tok(
            batch,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            pad_to_multiple_of=pad_multiple,
        ).to(model.device)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                max_new_tokens=tokens,
                min_new_tokens=tokens,
                do_sample=False,
                pad_token_id=tok.pad_token_id,
                **generate_kwargs,
            )
        texts += tok.batch_decode(
            out[:, enc["input_ids"].shape[1] :].tolist(), skip_special_tokens=True
        )
    _sync()
    return {"seconds": time.perf_counter() - t0, "texts": texts}


def continuous(backend, plan: list[list[str]], tokens: int) -> dict:
    """transformers' continuous batching over all the prompts at once."""
    from transformers import GenerationConfig

    model, tok = backend.model, backend.tokenizer
    prompts = [p for batch in plan for p in batch]
    ids = tok(prompts, add_special_tokens=False)["input_ids"]
    config = GenerationConfig(
        max_new_tokens=tokens,
        min_new_tokens=tokens,
        do_sample=False,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    t0 = time.perf_counter()
    out = model.generate_batch(inputs=ids, generation_config=config, progress_bar=False)
    _sync()
    seconds = time.perf_counter() - t0
    by_id = {k: v for k, v in out.items()}
    order = sorted(by_id, key=lambda k: int(str(k).rsplit("_", 1)[-1]))
    texts = [tok.decode(by_id[k].generated_tokens, skip_special_tokens=True) for k in order]
    return {"seconds": seconds, "texts": texts}


def time_variant(
    name: str, backend, plan: list[list[str]], tokens: int, ocg_raw: list[str]
) -> dict:
    """Answers/s of a variant, first and second pass, and its answers that differ from ocg's."""
    runs = []
    for _ in range(2):
        if name == "padded":
            runs.append(bare_answers(backend, plan, tokens, pad_multiple=8))
        elif name == "static":
            runs.append(bare_answers(backend, plan, tokens, cache_implementation="static"))
        else:
            runs.append(continuous(backend, plan, tokens))
    n = len(ocg_raw)
    return {
        "first_answers_per_s": round(n / runs[0]["seconds"], 2),
        "answers_per_s": round(n / runs[1]["seconds"], 2),
        "differ_from_ocg": sum(a != b for a, b in zip(runs[1]["texts"], ocg_raw)),
    }
