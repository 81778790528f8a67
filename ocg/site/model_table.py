"""The landing page's Models section (a status line per model: what it answered, its flags,
copies and batch-1 check, its design and run settings) and the scoring signatures table, as
rows of text that templates/models.html lays out."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..core.errors import OcgInputError
from ..core.layout import ModelGenerations
from ..generation.answer_store.completeness import problems
from ..metrics.degenerate import FLAG_COLUMNS
from ..metrics.listcopy import LIST_FLAGS
from ..records import RunCard, Signature
from ..results.designs import describe_design
from ..results.scores import Scores, comparable_signature, scoring_differences
from . import caveats

_RUN_SETTINGS = (
    "dtype",
    "attention",
    "quantization",
    "max_new_tokens",
    "batch_size",
)  # from each run card


@dataclass(frozen=True)
class Status:
    """A model's state on the page: a word (done, failed, ...), whether it is good, and why."""

    word: str
    ok: bool = False
    detail: str = ""


@dataclass(frozen=True)
class ModelRow:
    """One model's line: what a reader must see first (status, counts, caveats), then its run
    settings (`cells`: id, revision, dtype, attention, quantization, max_new_tokens, batch size)."""

    model: str
    status: Status
    answers: int
    flags: str
    copies: str
    batch: str
    design: str
    cells: list[str]
    reference: str = ""  # a reference row's source (its run card's `reference`), else ""


def _status(model, card_problem, scores: Scores, failures, unfinished) -> Status:
    if model in failures:
        f = failures[model]
        return Status(
            "failed",
            detail=f"in {f.get('notebook')}, cell {f.get('cell')}: {str(f.get('reason', ''))[:300]}",
        )
    if card_problem:
        return Status("unreadable run card", detail=card_problem)
    if unfinished.get(model):
        return Status("unfinished score set", detail=str(unfinished[model]))
    if blocking := problems(scores.signatures.get(model, Signature()).completeness)[0]:
        return Status("incomplete", detail="; ".join(blocking))
    if model in set(scores.summary.get("model", [])):
        return Status("done", ok=True)
    return Status("not scored")


def _flag_counts(s: pd.DataFrame) -> str:
    """'1 looping, 3 truncated': the flags that occur (the list flags have their own column)."""
    if not len(s):
        return ""
    return (
        ", ".join(
            f"{int(s[f'n_{f}'].sum())} {f.replace('_', ' ')}"
            for f in FLAG_COLUMNS
            if f not in LIST_FLAGS and f"n_{f}" in s and s[f"n_{f}"].sum()
        )
        or "none"
    )


def model_rows(models, generations_root, scores: Scores, failures, unfinished) -> list[ModelRow]:
    summary, rows = scores.summary, []
    for model in models:
        card_path = ModelGenerations.of(model, generations_root).run_card
        try:
            card, card_problem = (
                (RunCard.read(card_path) if card_path.exists() else RunCard()),
                None,
            )
        except OcgInputError as exc:  # the page still shows the other models
            card, card_problem = RunCard(), str(exc)
        s = summary[summary["model"] == model] if "model" in summary else pd.DataFrame()
        check, st = card.batch_invariance, card.settings
        batch = f"{check.differ}/{check.checked} changed by batching" if check else "–"
        sampled = (
            f"; {card.sampling.samples} samples, seeds {card.sampling.seeds}"
            if card.sampling
            else ""
        )
        if (
            check and card.sampling
        ):  # sample 0 again at batch 1, seeded from its own id: not batching alone
            batch = f"{check.differ}/{check.checked} of sample 0 differ at batch 1 (seeding differs too §)"
        asked, ran = (
            st.recorded("attention", "auto"),
            card.backend.attention,
        )  # a card older than it: auto
        settings = {
            **{
                k: st.recorded(k, "–") for k in _RUN_SETTINGS
            },  # auto shows what it resolved to: auto (sdpa)
            "attention": f"{asked} ({ran})" if asked == "auto" and ran else asked,
        }
        cells = [
            card.model_id or "–",
            str(card.revision or "–")[:24]
            + (f" ({st.revision}: not pinned)" if st.revision_pinned is False else ""),
            *settings.values(),
        ]
        design = describe_design(scores.designs[model], n=False) if model in scores.designs else "–"
        rows.append(
            ModelRow(
                model=str(model),
                status=_status(model, card_problem, scores, failures, unfinished),
                answers=int(s["n_answers"].sum()) if "n_answers" in s else 0,
                flags=_flag_counts(s) or "–",
                copies=caveats.list_copies(s),
                batch=batch,
                design=design + sampled,
                cells=[str(c) for c in cells],
                reference=str(st.reference or ""),
            )
        )
    return rows


@dataclass(frozen=True)
class SignatureRow:
    """How one model's answers were scored: matching rule, spaCy, sacreBLEU, BLEURT, perplexity."""

    model: str
    rule: str
    spacy: str
    sacrebleu: str
    bleurt: str
    perplexity: str


@dataclass(frozen=True)
class Signatures:
    differences: list[str]  # what differs between models' scoring: their numbers do not compare
    rows: list[SignatureRow]


def signatures(signatures: dict[str, Signature]) -> Signatures:
    rows = []
    for model, sig in signatures.items():
        keys = comparable_signature(sig)["metric_keys"]
        cov = keys.get("coverage", {})
        ppl = sig.family("perplexity")
        bleurt = sig.family("pbleurt")
        rows.append(
            SignatureRow(
                str(model),
                str(cov.get("rule", "–")),
                str(cov.get("spacy_model", "–")),
                str(sig.family("pbleu").get("sacrebleu", "–")),
                str(
                    bleurt.get("checkpoint", "–")
                    if bleurt.get("status") != "missing"
                    else "missing"
                ),
                str(ppl.get("used") or ("missing" if ppl else "–")),
            )
        )
    return Signatures([str(d) for d in scoring_differences(signatures)], rows)
