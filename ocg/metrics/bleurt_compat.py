"""bleurt-pytorch 0.0.1 on transformers 5: what it needs from transformers 4, supplied by us.

bleurt-pytorch is unmaintained; on transformers 5 it fails to import and to run because
transformers removed what it uses. `import_bleurt()` supplies each missing piece before (or just
after) the import, and changes nothing on transformers 4 (each piece is added only where absent):
- `transformers.pytorch_utils.find_pruneable_heads_and_indices`: used only by head pruning,
  which scoring never does; ours raises, saying so.
- the module `transformers.models.bert.tokenization_bert_fast`: an alias whose
  `BertTokenizerFast` is transformers 5's BertTokenizer (the fast one, renamed), refusing with
  OSError a checkpoint without its files (vocab.txt or tokenizer.json) as transformers 4 did:
  BleurtTokenizer tries it first and falls back to the sentencepiece tokenizer (BLEURT-20's) on
  that error; transformers 5 would otherwise build an empty vocabulary (every token [UNK]).
- `get_extended_attention_mask` and `get_head_mask` on BleurtPreTrainedModel (removed from
  PreTrainedModel): an encoder's padding mask as an additive bias of 0 / dtype minimum (as
  transformers 4 made it) and no head mask (a head mask given is refused).
- `sentencepiece.sentencepiece_model_pb2` where it cannot import (sentencepiece 0.2's is generated
  for protobuf >= 5; the lock has protobuf 3): transformers' own copy of that schema, for protobuf 3.
  transformers 5 reads the sentencepiece model (BLEURT-20's tokenizer) through it and, failing,
  tries a tiktoken reader that cannot read it.
- an `__init__` of its own on BleurtSPTokenizer (DebertaV2Tokenizer's): transformers 5 converts
  the sentencepiece model of a tokenizer class without one by a generic path that fails on
  a Unigram vocabulary ('list' object has no attribute 'items'), then tries tiktoken.
Equality with transformers 4 is tested in tests/metrics/test_bleurt_compat.py on a tiny checkpoint.
"""

from __future__ import annotations

import sys
import types


def _no_pruning(*_args, **_kwargs):
    raise NotImplementedError(
        "head pruning of bleurt-pytorch is not supported on transformers 5 "
        "(ocg.metrics.bleurt_compat)"
    )


def _extended_attention_mask(self, attention_mask, input_shape, device=None, dtype=None):
    """(batch, seq) 1/0 mask -> (batch, 1, 1, seq) bias: 0 where attended, dtype minimum where padded."""
    import torch

    if attention_mask.dim() != 2:
        raise ValueError(
            f"bleurt_compat: a 2-D padding mask was expected, got shape {tuple(attention_mask.shape)}"
        )
    dtype = dtype or self.dtype
    return (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def _head_mask(self, head_mask, num_hidden_layers, is_attention_chunked=False):
    if head_mask is not None:
        raise NotImplementedError("bleurt_compat: head masks are not supported on transformers 5")
    return [None] * num_hidden_layers


def _wordpiece_tokenizer():
    """transformers 5's BertTokenizer, loading only a checkpoint that holds its files."""
    from transformers.models.bert.tokenization_bert import BertTokenizer
    from transformers.utils import cached_file

    class BertTokenizerFast(BertTokenizer):
        @classmethod
        def from_pretrained(cls, path, *args, **kwargs):  # type: ignore[override]  # same call, looser signature: it forwards everything
            if not any(
                cached_file(
                    path,
                    name,
                    _raise_exceptions_for_missing_entries=False,
                    _raise_exceptions_for_connection_errors=False,
                )
                for name in ("tokenizer.json", "vocab.txt")
            ):
                raise OSError(
                    f"{path}: no vocab.txt or tokenizer.json (not a WordPiece BLEURT checkpoint)"
                )
            return super().from_pretrained(path, *args, **kwargs)

    return BertTokenizerFast


def _add_missing_before_import() -> None:
    import transformers.pytorch_utils as pytorch_utils

    if not hasattr(pytorch_utils, "find_pruneable_heads_and_indices"):
        pytorch_utils.find_pruneable_heads_and_indices = _no_pruning  # type: ignore[attr-defined]  # added here only when transformers lacks it
    try:
        import sentencepiece.sentencepiece_model_pb2  # noqa: F401
    except ImportError:
        from transformers.utils import sentencepiece_model_pb2

        sys.modules["sentencepiece.sentencepiece_model_pb2"] = sentencepiece_model_pb2
    name = "transformers.models.bert.tokenization_bert_fast"
    try:
        __import__(name)
    except ImportError:
        alias = types.ModuleType(
            name, "ocg.metrics.bleurt_compat: transformers 5's BertTokenizer under its 4.x name"
        )
        alias.BertTokenizerFast = _wordpiece_tokenizer()  # type: ignore[attr-defined]  # a module built here as the 4.x alias
        sys.modules[name] = alias


def import_bleurt():
    """The bleurt_pytorch package, usable on transformers 4 and 5."""
    _add_missing_before_import()
    import bleurt_pytorch
    from bleurt_pytorch.bleurt.modeling_bleurt import BleurtPreTrainedModel
    from bleurt_pytorch.bleurt.tokenization_bleurt_sp import BleurtSPTokenizer
    from transformers.models.deberta_v2.tokenization_deberta_v2 import DebertaV2Tokenizer

    if "__init__" not in BleurtSPTokenizer.__dict__ and hasattr(
        DebertaV2Tokenizer, "convert_to_native_format"
    ):
        BleurtSPTokenizer.__init__ = DebertaV2Tokenizer.__init__  # transformers 5 only (see above)
    for method, ours in (
        ("get_extended_attention_mask", _extended_attention_mask),
        ("get_head_mask", _head_mask),
    ):
        if not hasattr(BleurtPreTrainedModel, method):
            setattr(BleurtPreTrainedModel, method, ours)
    return bleurt_pytorch
