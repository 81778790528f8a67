"""The landing page's Models section (a status line per model: what it answered, its flags,
copies and batch-1 check, its design and run settings) and the scoring signatures table."""

from __future__ import annotations

import html

import pandas as pd

from ..core.errors import OcgInputError
from ..core.layout import ModelGenerations
from ..generation.answer_store.completeness import problems
from ..metrics.degenerate import FLAG_COLUMNS
from ..metrics.listcopy import LIST_FLAGS
from ..records import RunCard, Signature
from ..results.designs import describe_design
from ..results.scores import comparable_signature, scoring_differences
from . import caveats

_RUN_SETTINGS = (
    "dtype",
    "attention",
    "quantization",
    "max_new_tokens",
    "batch_size",
)  # from each run card


def _esc(x) -> str:
    return html.escape(str(x))


def model_rows(models, generations_root, scores, failures, unfinished) -> str:
    summary, rows = scores["summary"], []
    for model in models:
        card_path = ModelGenerations.of(model, generations_root).run_card
        try:
            card, card_problem = (
                (RunCard.read(card_path) if card_path.exists() else RunCard()),
                None,
            )
        except OcgInputError as exc:  # the page still shows the other models
            card, card_problem = RunCard(), str(exc)
        if model in failures:
            f = failures[model]
            status = (
                f"<span class='bad'>failed</span> in {_esc(f.get('notebook'))}, cell {_esc(f.get('cell'))}: "
                f"{_esc(str(f.get('reason', ''))[:300])}"
            )
        elif card_problem:
            status = "<span class='bad'>unreadable run card</span>: " + _esc(card_problem)
        elif unfinished.get(model):
            status = "<span class='bad'>unfinished score set</span>: " + _esc(unfinished[model])
        elif blocking := problems(scores["signatures"].get(model, Signature()).completeness)[0]:
            status = "<span class='bad'>incomplete</span>: " + _esc("; ".join(blocking))
        elif model in set(summary.get("model", [])):
            status = "<span class='ok'>done</span>"
        else:
            status = "<span class='bad'>not scored</span>"
        s = summary[summary["model"] == model] if "model" in summary else pd.DataFrame()
        counts = (
            ", ".join(
                f"{int(s[f'n_{f}'].sum())} {f.replace('_', ' ')}"
                for f in FLAG_COLUMNS
                if f not in LIST_FLAGS and f"n_{f}" in s and s[f"n_{f}"].sum()
            )
            or "none"
            if len(s)
            else ""
        )
        check, st = card.batch_invariance, card.settings
        batch = f"{check['differ']}/{check['checked']} changed by batching" if check else "–"
        sampled = (
            f"; {card.sampling['samples']} samples, seeds {card.sampling['seeds']}"
            if card.sampling
            else ""
        )
        if (
            check and card.sampling
        ):  # sample 0 again at batch 1, seeded from its own id: not batching alone
            batch = f"{check['differ']}/{check['checked']} of sample 0 differ at batch 1 (seeding differs too §)"
        asked, ran = (
            st.get("attention", "auto"),
            card.backend.get("attention"),
        )  # a card older than it: auto
        settings = {
            **{
                k: st.get(k, "–") for k in _RUN_SETTINGS
            },  # auto shows what it resolved to: auto (sdpa)
            "attention": f"{asked} ({ran})" if asked == "auto" and ran else asked,
        }
        cells = [
            card.model_id or "–",
            str(card.revision or "–")[:24]
            + (
                f" ({st.get('revision')}: not pinned)" if st.get("revision_pinned") is False else ""
            ),
            *settings.values(),
        ]
        # what a reader must see comes first (status, counts, caveats); the settings may scroll off to the right
        rows.append(
            f"<tr><td><code>{_esc(model)}</code></td><td style='text-align:left'>{status}</td>"
            f"<td>{int(s['n_answers'].sum()) if 'n_answers' in s else 0}</td>"
            f"<td style='text-align:left'>{_esc(counts) or '–'}</td>"
            f"<td style='text-align:left'>{_esc(caveats.list_copies(s))}</td><td>{_esc(batch)}</td>"
            f"<td style='text-align:left'>{_esc(describe_design(scores['designs'][model], n=False) if model in scores['designs'] else '–')}"
            f"{_esc(sampled)}</td>" + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>"
        )
    return (
        "<div class='scroll'><table><tr><th>model</th><th>status</th><th>answers</th>"
        "<th>flagged answers (<a href='#flags'>?</a>)</th>"
        "<th>copy the list / answers, per condition (<a href='#flags'>?</a>)</th><th>batch-1 check</th><th>design</th>"
        "<th>id</th><th>revision</th><th>dtype</th><th>attention</th><th>quant.</th><th>max_new_tokens</th><th>batch size</th></tr>"
        + "".join(rows)
        + "</table></div>"
    )


def signatures(signatures: dict[str, Signature]) -> str:
    differences = scoring_differences(signatures)
    out = []
    if differences:
        out.append(
            "<div class='warn'><b>These models were scored differently</b>; their numbers are not "
            "comparable:<ul>" + "".join(f"<li>{_esc(d)}</li>" for d in differences) + "</ul></div>"
        )
    rows = []
    for model, sig in signatures.items():
        keys = comparable_signature(sig)["metric_keys"]
        cov = keys.get("coverage", {})
        ppl = sig.family("perplexity")
        bleurt = sig.family("pbleurt")
        rows.append(
            f"<tr><td><code>{_esc(model)}</code></td><td>{_esc(cov.get('rule', '–'))}</td>"
            f"<td>{_esc(cov.get('spacy_model', '–'))}</td>"
            f"<td style='text-align:left'>{_esc(sig.family('pbleu').get('sacrebleu', '–'))}</td>"
            f"<td>{_esc(bleurt.get('checkpoint', '–') if bleurt.get('status') != 'missing' else 'missing')}</td>"
            f"<td>{_esc(ppl.get('used') or ('missing' if ppl else '–'))}</td></tr>"
        )
    out.append(
        "<table><tr><th>model</th><th>matching rule</th><th>spaCy</th><th>sacreBLEU</th><th>BLEURT</th>"
        "<th>perplexity model</th></tr>" + "".join(rows) + "</table>"
    )
    return "".join(out)
