"""A static case browser: every answer of a report, filterable, readable from disk (no server).

`cases.html` holds the page; its data sit beside it as one small script per (model, condition,
template) under `cases/` (4,608 answers each at paper size), loaded on demand with a <script>
tag, which browsers allow from file:// where fetch() is refused. Each script holds its rows as
gzip'd JSON in base64, which the page inflates with the browser's own DecompressionStream: rows
repeat most of their text (the prompt's template, the concepts), so a report takes a small
fraction of the disk (benchmarks/paper_scale.py prints the sizes); `read_chunk` (chunks.py) reads
one. Each row shows the prompt as rendered, the raw output, the extracted answer, its tokens with
the concepts' matches highlighted at the positions the order verdict used (and those positions),
the answer's flags; beside its order verdict its quality where scored (case_quality.py: PoS-correct
coverage, non-words, SLOR, perplexity); where an LLM judge scored it (docs/METHODS.md, "LLM
judge"), its rating and order verdict beside ocg's, their disagreements counted per chunk in the
index and filterable on the page.
With repeated samples each row is one (instance, sample), with that sample's prompt and raw output.
Highlight offsets are written in UTF-16 code units, as JavaScript strings count (an emoji is two).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..core.files import atomic_path
from ..core.frames import GROUP_KEYS, SAMPLE, SUMMARY_KEYS, sample_index, samples_or_zero
from ..core.layout import ModelGenerations, ModelScores, ReportFolder
from ..metrics.degenerate import FLAG_COLUMNS
from .case_quality import QUALITY_COLUMNS, missing_columns, quality_of, quality_values
from .chunks import chunk_script, read_index, spans, utf16_spans  # noqa: F401 (read_index: its old home)
from .render import render

BASE_FIELDS = [
    "set_id",
    "perm_index",
    "concepts",
    "pos_pattern",
    "prompt",
    "raw",
    "answer",
    "answer_status",
    "tokens",
    "match_positions",
    "all_present",
    "in_order",
    "flags",
    "spans",
    "sample",
]
JUDGE_COLUMNS = ["judge_score", "judge_order", "judge_in_order", "judge_reason"]
# every field a chunk may carry, in its order: a quality column the run did not score is left out,
# the judge's four where no judge scored the answers
FIELDS = [*BASE_FIELDS, *QUALITY_COLUMNS, *JUDGE_COLUMNS]
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def chunk_name(model: str, condition: str, template_id: int) -> str:
    return _SAFE.sub("_", f"{model}__{condition}__t{template_id}") + ".js"


def _sample(value) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _judged(r: dict) -> list:
    """The judge's rating, the concepts in the order it read them and its order verdict (True,
    False), None each where the answer is unjudged or no judge scored it; and why it is unjudged
    (e.g. "the answer carries a verdict"; None where judged or scored before reasons were kept)."""
    score, order, verdict, reason = (r.get(c) for c in JUDGE_COLUMNS)
    unjudged = verdict is None or pd.isna(verdict)
    return [
        None if score is None or pd.isna(score) else float(score),
        None if order is None or unjudged else [str(c) for c in order],
        None if unjudged else bool(verdict),
        reason if isinstance(reason, str) else None,
    ]


def judge_disagrees(answers: pd.DataFrame) -> pd.Series:
    """Judged answers whose judge's order verdict differs from ocg's `in_order`."""
    if "judge_in_order" not in answers:
        return pd.Series(False, index=answers.index)
    judged = answers["judge_in_order"].notna()
    return judged & (
        answers["judge_in_order"].fillna(0).astype(bool) != answers["in_order"].astype(bool)
    )


def _rows(
    answers: pd.DataFrame, extra: dict[tuple[str, int], tuple[str, str]], fields: list[str]
) -> list[list]:
    """One list per answer, in `fields` order (FIELDS less the columns the answers lack);
    `extra` maps (instance id, sample) to (prompt, raw)."""
    quality = [c for c in QUALITY_COLUMNS if c in fields]
    judged = "judge_in_order" in fields
    rows = []
    has = set(answers.columns)
    for r in answers.to_dict("records"):
        sample = _sample(r.get(SAMPLE))
        prompt, raw = extra.get((r["instance_id"], sample_index(sample)), ("", ""))
        tokens = r.get("tokens") if "tokens" in has else None
        # the positions the order verdict used; scores from before they were stored: first matches
        positions = (
            r.get("order_positions") if "order_positions" in has else r.get("match_positions")
        )
        rows.append(
            [
                r["set_id"],
                int(r["perm_index"]),
                list(r["concepts"]),
                r["pos_pattern"],
                prompt,
                raw,
                r["answer"] if isinstance(r["answer"], str) else None,
                r["answer_status"],
                list(tokens) if tokens is not None else [],
                [int(x) for x in positions] if positions is not None else [],
                bool(r.get("all_present", False)),
                bool(r.get("in_order", False)),
                [f for f in FLAG_COLUMNS if bool(r.get(f, False))],
                utf16_spans(
                    r["answer"],
                    spans(
                        r["answer"],
                        list(tokens) if tokens is not None else None,
                        [int(x) for x in positions] if positions is not None else None,
                    ),
                ),
                sample,
                *quality_values(r, quality),
                *(_judged(r) if judged else []),
            ]
        )
    return rows


def _prompt_text(prompt) -> str:
    """The prompt as shown: rendered text as is; API (and replay) messages one turn per block."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        return "\n\n".join(
            f"[{m.get('role', '?')}]\n{m.get('content', '')}" if isinstance(m, dict) else str(m)
            for m in prompt
        )
    return ""


def _prompts_and_raw(generations: pd.DataFrame) -> dict[tuple[str, int], tuple[str, str]]:
    """(instance id, sample) -> (prompt, raw output); a record without `sample` is sample 0."""
    if generations.empty:
        return {}
    prompts = generations["prompt"] if "prompt" in generations else [""] * len(generations)
    raws = generations["raw"] if "raw" in generations else [""] * len(generations)
    samples = samples_or_zero(generations).tolist()
    grammars = generations["grammar"] if "grammar" in generations else [None] * len(generations)
    return {
        (i, s): (_prompt_text(p) + _forced(g), r if isinstance(r, str) else "")
        for i, s, p, r, g in zip(generations["instance_id"], samples, prompts, raws, grammars)
    }


def _forced(grammar) -> str:
    """A constrained answer's grammar, shown under its prompt (docs/METHODS.md, "Forcing the order")."""
    return f"\n\n[decoded under the grammar]\n{grammar}" if isinstance(grammar, str) else ""


def chunk_fields(answers: pd.DataFrame) -> list[str]:
    """A chunk's fields: the answer's own, the quality columns with a value, the judge's four
    where a judge scored them (none: the page says nothing, not "unjudged")."""
    judged = JUDGE_COLUMNS if "judge_in_order" in answers else []
    return [*BASE_FIELDS, *quality_of(answers), *judged]


def write_chunks(
    out_dir: str | Path, answers: pd.DataFrame, generations: dict[str, pd.DataFrame]
) -> list[dict]:
    """cases/*.js for these scored answers (one per model, condition, template); their index entries.
    `generations` maps a model to its records (prompt and raw output), which may be empty."""
    chunks = ReportFolder(Path(out_dir)).case_chunks
    index = []
    extra = {m: _prompts_and_raw(g) for m, g in generations.items()}
    for (model, condition, template_id), a in answers.groupby(SUMMARY_KEYS, sort=True):
        a = a.sort_values(["set_id", "perm_index", *([SAMPLE] if SAMPLE in a else [])])
        name = chunk_name(model, condition, int(template_id))
        fields = chunk_fields(a)
        payload = {"fields": fields, "rows": _rows(a, extra.get(model, {}), fields)}
        with atomic_path(chunks / name) as tmp:
            tmp.write_text(chunk_script(name, payload), encoding="ascii")
        index.append(
            {
                "model": model,
                "condition": condition,
                "template_id": int(template_id),
                "file": f"{chunks.name}/{name}",
                "n": len(a),
                "n_judged": int(a["judge_in_order"].notna().sum()) if "judge_in_order" in a else 0,
                "n_judge_disagrees": int(judge_disagrees(a).sum()),
            }
        )
    return index


def write_page(out_dir: str | Path, index: list[dict]) -> Path:
    """cases.html: the page (templates/case_browser.html, its script static/case_browser.js) with the chunks'
    index as JSON inside it."""
    page = render("case_browser.html", index=index)
    path = ReportFolder(Path(out_dir)).cases
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path


ANSWER_COLUMNS = [
    "instance_id",
    SAMPLE,
    *GROUP_KEYS,
    "perm_index",
    "concepts",
    "pos_pattern",
    "answer",
    "answer_status",
    "tokens",
    "match_positions",
    "order_positions",
    "all_present",
    "in_order",
    *FLAG_COLUMNS,
    *QUALITY_COLUMNS,
    *JUDGE_COLUMNS,
]


def _model_chunks(out_dir: str, model: str, scores_root: str, generations_root: str) -> list[dict]:
    """One model's chunks (its answers and generation records read here, then dropped)."""
    from ..generation.answer_store.store import read_generations

    path = ModelScores.of(model, scores_root).answers
    if not path.exists():
        return []
    # a family scored as missing (no judge named, no perplexity model) holds only NaN: left out,
    # so no answer reads "unjudged" or "no perplexity"
    present = set(_parquet_columns(path)) - missing_columns(
        ModelScores.of(model, scores_root).signature
    )
    answers = pd.read_parquet(path, columns=[c for c in ANSWER_COLUMNS if c in present])
    return write_chunks(
        out_dir,
        answers,
        {model: read_generations(ModelGenerations.of(model, generations_root).folder)},
    )


def write_case_browser_from(
    out_dir: str | Path,
    models: list[str],
    scores_root: str | Path,
    generations_root: str | Path,
    *,
    progress: bool = False,
    processes: int | None = None,
) -> Path:
    """The case browser for many models, read and written one model at a time per process, so
    memory holds a few models' answers (83k each at paper size), never all of them. Several
    models at once on several CPUs (`processes`, default: every CPU this job may use)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from tqdm import tqdm

    from ..core.progress import bars_shown
    from ..core.provenance import available_cpus

    jobs = [(str(out_dir), m, str(scores_root), str(generations_root)) for m in models]
    workers = min(processes or available_cpus(), len(jobs))
    bar = tqdm(
        total=len(jobs),
        desc="case browser",
        unit="model",
        disable=not (progress and bars_shown()),
    )
    index = []
    if workers <= 1:
        for job in jobs:
            index += _model_chunks(*job)
            bar.update()
    else:  # spawn: safe from any caller (a kernel, a thread); each worker imports ocg once
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for entries in pool.map(_model_chunks, *zip(*jobs)):
                index += entries
                bar.update()
    bar.close()
    return write_page(out_dir, index)


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_schema(path).names
