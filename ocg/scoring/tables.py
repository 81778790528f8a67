"""A model's answers and groups tables with each scoring family's columns: the answer rows and
their flags, then every family computed (coverage in worker processes meanwhile) or, where its key
is unchanged, its columns copied from the old tables."""

from __future__ import annotations

import time

import pandas as pd

from ..core.frames import GROUP_KEYS, SAMPLE, sample_column
from ..core.progress import duration
from ..metrics import bleu, degenerate
from ..records import Signature
from .families import FAMILIES
from .family import Context, Family
from .samples import keys_with_sample


def answer_rows(records: pd.DataFrame) -> pd.DataFrame:
    """One row per answer before any family's columns: its ids, the answer and how it was got,
    and its sample in a sampled run (a group is then a group of one sample)."""
    answers = records[
        [
            "instance_id",
            *GROUP_KEYS,
            "perm_index",
            "pos_pattern",
            "concepts",
            "answer",
            "answer_status",
        ]
    ].copy()
    answers["answer_source"] = (
        records["answer_source"].fillna("raw") if "answer_source" in records else "raw"
    )
    answers["finish_reason"] = records["finish_reason"] if "finish_reason" in records else None
    if (samples := sample_column(records)) is not None:
        answers.insert(1, SAMPLE, samples)
    return answers


def _flagged(answers: pd.DataFrame, texts: pd.Series, group_keys: list[str]):
    """The answers with their flags and token counts, the groups (one row each), each group's texts."""
    answers = pd.concat(
        [answers, degenerate.flag_answers(answers["answer"], answers.get("finish_reason"))], axis=1
    )
    answers["n_tokens"] = texts.map(lambda t: len(bleu.tokenize_13a(t)))
    grouped = list(answers.groupby(group_keys, sort=True))
    groups = pd.DataFrame([dict(zip(group_keys, key), n=len(g)) for key, g in grouped])
    return answers, groups, [list(texts.loc[g.index]) for _, g in grouped]


def compute(
    metrics: list[str], reused: list[str], ctx: Context, old_tables: dict, old: Signature | None
):
    """The tables (answers, groups) with each family's columns, each family's signature block and
    the seconds each took: families with a `start` run in worker processes (coverage) while the
    rest is computed here; reused ones are copied from the old tables."""
    started = {}
    try:
        for metric, start in [(m, FAMILIES[m].start) for m in metrics if m not in reused]:
            if start is not None:
                started[metric] = (start(ctx), time.perf_counter())
        group_keys = keys_with_sample(GROUP_KEYS, ctx.answers)
        answers, groups, ctx.group_texts = _flagged(ctx.answers, ctx.texts, group_keys)
        ctx.answers = answers
        tables, blocks, timings = {"answers": answers, "groups": groups}, {}, {}
        index = {
            "answers": ["instance_id", *group_keys[len(GROUP_KEYS) :]],
            "groups": group_keys,
        }  # sample too
        for level in ("answers", "groups"):
            for metric in [m for m in metrics if FAMILIES[m].level == level]:
                if metric in reused:  # the same rows, in the same order: copy the columns across
                    if old is None:  # a family is reused only from an old signature
                        raise AttributeError(f"{metric}: reused without an old signature")
                    columns, record = (
                        _kept(old_tables[level], tables[level], index[level], FAMILIES[metric]),
                        old.families[metric],
                    )
                else:
                    handle, t = started.get(metric, (None, time.perf_counter()))
                    columns, record = handle.result() if handle else FAMILIES[metric].compute(ctx)
                    timings[metric] = time.perf_counter() - t
                    ctx.log(f"{metric}: done in {duration(timings[metric])}")
                blocks[metric] = Family.block(ctx.keys[metric], record)
                tables[level] = tables[level].assign(
                    **{
                        c: list(columns[c])
                        if not isinstance(columns, pd.DataFrame)
                        else columns[c].to_numpy()
                        for c in FAMILIES[metric].columns
                    }
                )
        return tables, blocks, timings
    finally:
        for handle, _ in started.values():
            handle.close()


def _kept(old: pd.DataFrame, table: pd.DataFrame, index: list[str], family: Family) -> dict:
    """A reused family's columns from the old table, in the new table's row order."""
    kept = old.set_index(index).loc[
        pd.MultiIndex.from_frame(table[index]) if len(index) > 1 else table[index[0]]
    ]
    return {c: kept[c].to_numpy() for c in family.columns}
