"""Constrained decoding on the transformers backend through xgrammar (docs/METHODS.md, "Forcing
the order"): each instance's expression (ordered_grammar.py) compiled against the model's
tokenizer, and a transformers LogitsProcessor that masks every token the expression cannot take
next (xgrammar.contrib.hf.LogitsProcessor: one matcher per batch row, its CPU bitmask kernel
off a GPU). xgrammar is the engine vLLM and SGLang use for structured outputs, so a regex
forced here and one sent to a vLLM server (api_backend.py) are applied by the same library.

Every forced answer is checked against its grammar before it is stored (`check_forced`): a
server that ignores the regex (vLLM before 0.10.2 ignores an unknown `structured_outputs` field
and only logs it) would otherwise have free answers stored, and reported, as forced.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...core.errors import OcgFault
from ...data.lexicon import lexicon_version
from ...records import ConstrainedBlock
from ..ordered_grammar import GRAMMAR_RULE, GRAMMAR_VERSION, grammar_sha256

LIBRARY = "xgrammar"


def grammar_backends() -> list[str]:
    """The backends that apply a grammar (their class says `applies_grammars`)."""
    from . import BACKENDS

    return [name for name, cls in BACKENDS.items() if getattr(cls, "applies_grammars", False)]


def check_backends(
    where: str, conditions: list[str], models: list[str], specs: dict, templates
) -> None:
    """A run or sweep file that forces a grammar only on models whose backend applies one
    (refused before any work; run.py checks again for `ocg generate`)."""
    from ...core.errors import OcgInputError

    for i, cond in enumerate(conditions):
        if cond not in templates.conditions or not templates.conditions[cond].constraint:
            continue
        for model in models:
            if specs[model].backend not in grammar_backends():
                raise OcgInputError(
                    f"{where}: conditions[{i}]",
                    f"{cond!r} forces a grammar at decoding time; model "
                    f"{model!r} has the {specs[model].backend} backend, which cannot apply one "
                    f"({' and '.join(grammar_backends())} can): leave out the condition or the model",
                )


def library_version() -> str:
    from importlib import metadata

    return metadata.version(LIBRARY)


def card_block(grammars: dict[str, str]) -> ConstrainedBlock:
    """What the run card records of a constrained condition: the library, the lexicon, the rule,
    and each instance's grammar sha256 (the text itself is in each record: `grammar`)."""
    return ConstrainedBlock.model_validate(
        {
            "library": LIBRARY,
            "library_version": library_version(),
            "lexicon": "lemminflect",
            "lexicon_version": lexicon_version(),
            "grammar_version": GRAMMAR_VERSION,
            "grammar_rule": GRAMMAR_RULE,
            "grammar_sha256": {i: grammar_sha256(g) for i, g in sorted(grammars.items())},
        }
    )


class Compiler:
    """One model's grammar compiler: its tokenizer's vocabulary (the logits' width) and stop
    tokens, compiled expressions cached by text."""

    def __init__(self, tokenizer, vocab_size: int, stop_token_ids: list[int]):
        import xgrammar as xgr

        info = xgr.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=vocab_size, stop_token_ids=sorted(stop_token_ids)
        )
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


def processors_for(compiler: Compiler | None, regexes: list[str | None]) -> list | None:
    """The logits processors of one batch (`compiler`: the backend's, built once): none when no
    row is constrained; every row must be, or none (a batch holds one condition)."""
    if not any(regexes):
        return None
    if not all(regexes):
        raise ValueError("a batch mixes constrained and free instances; batches hold one condition")
    if compiler is None:
        raise ValueError("a constrained batch needs the backend's grammar compiler")
    return [compiler.logits_processor([r for r in regexes if r])]


class NotForced(OcgFault):
    """An answer of a constrained condition that its grammar does not admit: the decoder (a
    server that ignored the regex) did not force it. The run stops before the batch is written."""


def _admits(full, partial, raw, finish_reason) -> bool:
    if not isinstance(raw, str):
        return False
    if finish_reason == "stop":
        return full().fullmatch(raw) is not None
    # cut by the budget: the start of a sentence of the grammar, and not nothing (the empty text
    # starts every sentence, yet a decoder that spent its budget under the grammar wrote some)
    return raw != "" and partial().fullmatch(raw, partial=True) is not None


@lru_cache(maxsize=256)
def _full(grammar: str):
    return re.compile(grammar)


@lru_cache(maxsize=256)
def _partial(grammar: str):
    import regex  # as `re`, plus partial matching (is this text the start of an admitted one?)

    return regex.compile(grammar)


def forced_as_asked(raw: str | None, grammar: str, finish_reason: str | None) -> bool:
    """Whether `raw` (the text the grammar was applied to, not the extracted answer) is what
    decoding under `grammar` can give: a finished answer (`stop`) is a sentence of it; one cut by
    the budget (any other finish reason) the start of one, never empty."""
    return _admits(lambda: _full(grammar), lambda: _partial(grammar), raw, finish_reason)


def not_forced(items) -> list:
    """The keys of the (key, grammar, raw, finish_reason) items not forced as asked; each grammar
    compiled once (a store repeats one per template and sample, far apart)."""
    groups: dict[str, list] = {}
    for key, grammar, raw, finish in items:
        groups.setdefault(grammar, []).append((key, raw, finish))
    bad = []
    for grammar, group in groups.items():
        full, partial = (
            lru_cache(1)(lambda g=grammar: re.compile(g)),
            lru_cache(1)(lambda g=grammar: _partial(g)),
        )
        bad += [key for key, raw, finish in group if not _admits(full, partial, raw, finish)]
    return sorted(bad)


def decoder_name(spec, backend) -> str:
    """The server and model (or the local model) that decoded, for an error message."""
    if backend.kind == "openai":
        return f"{backend.url} (model {spec.id!r} of entry {spec.name!r})"
    return f"{spec.name} ({backend.kind}, {spec.id})"


def check_forced(spec, backend, instance_ids: list[str], outputs: list[dict]) -> None:
    """Every answer of a constrained instance in this batch is in its grammar, else NotForced
    naming the decoder, the instance and the answer (nothing of the batch is written)."""
    grammars = getattr(backend, "grammars", {}) or {}
    bad = [
        (iid, out)
        for iid, out in zip(instance_ids, outputs)
        if grammars.get(iid)
        and not forced_as_asked(out.get("raw"), grammars[iid], out.get("finish_reason"))
    ]
    if not bad:
        return
    iid, out = bad[0]
    if backend.kind != "openai":
        hint = "the grammar's mask was not applied as compiled"
    elif spec.api.regex_param == "structured_outputs":
        hint = (
            "the server ignored the regex it was sent as `structured_outputs` (vLLM before 0.10.2 ignores "
            "that field): set the entry's `api.regex_param: guided_regex`, or use a server that applies it"
        )
    else:
        hint = (
            f"the server ignored the regex it was sent as `{spec.api.regex_param}`: set the entry's "
            "`api.regex_param: structured_outputs` (vLLM >= 0.10.2), or use a server that applies it"
        )
    raise NotForced(
        f"{decoder_name(spec, backend)}: {len(bad)} of {len(outputs)} answers of this batch are not in "
        f"their grammar, e.g. instance {iid} (finish_reason {out.get('finish_reason')!r}): "
        f"{str(out.get('raw'))[:120]!r}; {hint}. Not written (they were not forced); the answers "
        "written before are kept"
    )
