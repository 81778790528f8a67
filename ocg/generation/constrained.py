"""Constrained decoding on the transformers backend through xgrammar (docs/METHODS.md, "Forcing
the order"): each instance's expression (ordered_grammar.py) compiled against the model's
tokenizer, and a transformers LogitsProcessor that masks every token the expression cannot take
next (xgrammar.contrib.hf.LogitsProcessor: one matcher per batch row, its CPU bitmask kernel
off a GPU). xgrammar is the engine vLLM and SGLang use for structured outputs, so a regex
forced here and one sent to a vLLM server (api_backend.py) are applied by the same library.
"""

from __future__ import annotations

from .ordered_grammar import GRAMMAR_RULE, GRAMMAR_VERSION, grammar_sha256, lexicon_version

LIBRARY = "xgrammar"


def library_version() -> str:
    from importlib import metadata
    return metadata.version(LIBRARY)


def card_block(grammars: dict[str, str]) -> dict:
    """What the run card records of a constrained condition: the library, the lexicon, the rule,
    and each instance's grammar sha256 (the text itself is in each record: `grammar`)."""
    return {"library": LIBRARY, "library_version": library_version(), "lexicon": "lemminflect",
            "lexicon_version": lexicon_version(), "grammar_version": GRAMMAR_VERSION,
            "grammar_rule": GRAMMAR_RULE, "grammar_sha256": {i: grammar_sha256(g) for i, g in sorted(grammars.items())}}


class Compiler:
    """One model's grammar compiler: its tokenizer's vocabulary (the logits' width) and stop
    tokens, compiled expressions cached by text."""

    def __init__(self, tokenizer, vocab_size: int, stop_token_ids: list[int]):
        import xgrammar as xgr
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size,
                                                  stop_token_ids=sorted(stop_token_ids))
        self._compiler = xgr.GrammarCompiler(info)
        self._compiled: dict[str, object] = {}

    def compile(self, regex: str):
        if regex not in self._compiled:
            self._compiled[regex] = self._compiler.compile_regex(regex)
        return self._compiled[regex]

    def logits_processor(self, regexes: list[str]):
        """A fresh processor for one generate() call, one expression per batch row (xgrammar's
        processor keeps matcher state, so it serves one call only)."""
        from xgrammar.contrib.hf import LogitsProcessor
        return LogitsProcessor([self.compile(r) for r in regexes])


def processors_for(backend, regexes: list[str | None]) -> list | None:
    """The logits processors of one batch: none when no row is constrained; every row must be,
    or none (a batch holds one condition)."""
    if not any(regexes):
        return None
    if not all(regexes):
        raise ValueError("a batch mixes constrained and free instances; batches hold one condition")
    if getattr(backend, "_grammar_compiler", None) is None:
        backend._grammar_compiler = Compiler(backend.tokenizer, backend.model.config.vocab_size,
                                             sorted(backend.eos_ids))
    return [backend._grammar_compiler.logits_processor(regexes)]
