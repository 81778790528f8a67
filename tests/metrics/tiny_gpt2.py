"""A random tiny GPT-2 for the perplexity tests (the `tiny_lm` fixture of tests/metrics/conftest.py),
and the real answers it is trained and measured on."""

import json
from pathlib import Path

LABELS = Path(__file__).parent.parent / "fixtures" / "matching_labels.jsonl"
CONTEXT = 48  # the tiny model's positions: the longest answers are truncated


def real_answers(n: int = 40) -> list[str]:
    """n distinct real LLM answers (CommonGen-Eval outputs), spread evenly over their lengths."""
    outputs = sorted(
        {json.loads(line)["output"] for line in LABELS.read_text().splitlines()},
        key=lambda t: (len(t), t),
    )
    return [outputs[round(i * (len(outputs) - 1) / (n - 1))] for i in range(n)]


def build_tiny_gpt2(path: Path) -> Path:
    """A random tiny GPT-2 (no pad token, like GPT2-XL) with a byte-level BPE trained here: no hub."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer, bpe.decoder = (
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        decoders.ByteLevel(),
    )
    bpe.train_from_iterator(
        real_answers(200),
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<unk>", "<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", unk_token="<unk>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=CONTEXT,
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=1,
            eos_token_id=1,
        )
    )
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path
