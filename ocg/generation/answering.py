"""A run's answering (after ocg/generation/run_generation.py has prepared its state): every prompt it may ask
stored first, then the missing answers generated batch by batch and appended, the run's entry on
the card, and the batch-1 check at the end."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..core.frames import record_sample
from ..core.interrupts import check_stop
from ..core.progress import bars_shown, say
from ..records import RunEntry, RunStatus
from .answer_store.completeness import tally_stores
from .answer_store.store import GenerationStore
from .backends import constrained
from .backends.protocol import Backend
from .estimate import after_a_batch, batch_check_pace, batch_check_result, so_far
from .extraction import answer_source, extract_answer, prompt_opens_think
from .invariance import plan_batches
from .ordered_grammar import grammar_sha256
from .run_card import check_compatible, now_utc
from .run_state import RunState, answers_to_do


def check_batch_invariance(
    backend: Backend,
    rendered: dict[str, object],
    raw: dict[str, str],
    *,
    n: int,
    seed: int,
    progress: bool = True,
) -> dict:
    """Regenerate a sample at batch size 1; the share of answers that batching changed (sampled
    runs: of sample 0, where a batch of one is also seeded otherwise: see the note)."""
    sample = sorted(random.Random(seed).sample(sorted(raw), min(n, len(raw))))
    differ, t0 = [], time.perf_counter()
    for k, iid in enumerate(
        tqdm(sample, desc="batch-1 check", unit="inst", disable=not (progress and bars_shown()))
    ):
        if backend.generate([rendered[iid]], instance_ids=[iid])[0]["raw"] != raw[iid]:
            differ.append(iid)
        if (
            k == 0 and progress and len(sample) > 1
        ):  # its cost, said early (ocg/generation/estimate.py)
            say(batch_check_pace(backend.spec.name, time.perf_counter() - t0, len(sample)))
    if progress and sample:
        say(batch_check_result(backend.spec.name, len(differ), len(sample), backend.batch_size))
    out: dict[str, Any] = {
        "checked": len(sample),
        "differ": len(differ),
        "share_differ": round(len(differ) / len(sample), 4) if sample else None,
        "instances_differ": differ,
        "batched_size": backend.batch_size,
        "dtype": backend.spec.dtype,
        "quantization": backend.spec.quantization,
    }
    if backend.sampling:
        out["note"] = (
            "sampled: sample 0 regenerated alone, seeded from its own id rather than its "
            "batch's first id, so a difference is seeding as well as batching"
        )
    return out


# A batch's progress line at most this often (a paper-size run on a GPU has thousands of batches)
UPDATE_EVERY_S = 30.0


def answer_todo(state: RunState, asked: dict) -> Path:
    """Generate what is missing as one run on the card (`asked`: the run entry's first fields);
    the card is written as the run starts, and as it ends (complete, failed or interrupted)."""
    repaired = {c: n for c, s in state.stores.items() if (n := s.prepare_for_append())}
    run = {
        "started_utc": now_utc(),
        **asked,
        "status": RunStatus.RUNNING,
        "repaired_torn_bytes": repaired,
    }
    state.save(state.card.replace(runs=[*state.card.runs, RunEntry.model_validate(run)]))
    try:
        for cond, store in state.stores.items():  # every prompt this run may ask, before any record
            store.add_prompts(state.rendered[i] for i in state.rows[cond]["instance_id"])
        written, new_tokens, seconds = _answer_missing(state)
        run.update(
            written=written,
            seconds=round(seconds, 2),
            new_tokens=new_tokens,
            tokens_per_s=round(new_tokens / max(seconds, 1e-9), 2),
        )
        run["answers_by_status_and_source"] = _by_status_and_source(state.stores)
        if state.spec.batch_check and state.backend.batch_size > 1:
            run["batch_invariance"] = _batch_check(state)
    except BaseException as exc:
        run.update(
            status=RunStatus.FAILED if isinstance(exc, Exception) else RunStatus.INTERRUPTED,
            finished_utc=now_utc(),
            error=f"{type(exc).__name__}: {str(exc)[:500]}",
        )
        # a full disk still leaves the card `failed`
        failed = state.with_run(run).replace(status=run["status"], backend=state.backend.card())
        state.save(failed, when_full=True)
        raise
    run.update(status=RunStatus.COMPLETE, finished_utc=now_utc())
    state.save(
        state.with_run(run).replace(
            status=RunStatus.COMPLETE,
            backend=state.backend.card(),
            records=tally_stores(state.stores, state.rows, state.samples),
        )
    )
    return state.model_dir


def _by_status_and_source(stores: dict[str, GenerationStore]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for store in stores.values():
        for r in store.records():
            key = f"{r['answer_status']}/{r.get('answer_source', 'raw')}"
            counts[key] = counts.get(key, 0) + 1
    return counts


def _batch_check(state: RunState) -> dict:
    """The batch-1 check over sample 0 of this run's answers."""
    raw = {
        r["instance_id"]: r["raw"]
        for s in state.stores.values()
        for r in s.records()
        if r["instance_id"] in state.rendered and not record_sample(r)
    }
    spec = state.spec
    return check_batch_invariance(
        state.backend,
        state.rendered,
        raw,
        n=spec.batch_check,
        seed=spec.seed,
        progress=state.progress,
    )


@dataclass(frozen=True)
class Batch:
    """One planned batch of one condition and sample: its instances' rows, in plan order."""

    condition: str
    sample: int
    index: int
    rows: list  # the instances' rows (itertuples)

    @property
    def ids(self) -> list[str]:
        return [r.instance_id for r in self.rows]


def _batches(state: RunState):
    """(store, batch) for every planned batch: per condition, per sample, in plan order."""
    for cond, store in state.stores.items():
        ids = list(state.rows[cond]["instance_id"])
        lengths = state.backend.prompt_lengths([state.rendered[i] for i in ids])
        plan = plan_batches(ids, lengths, state.backend.batch_size)
        # rows by position: .iloc took 0.4 ms a row (ocg_overhead.py)
        table = list(state.rows[cond].itertuples(index=False))
        for sample in range(state.samples):
            for index, positions in enumerate(plan):
                yield store, Batch(cond, sample, index, [table[p] for p in positions])


class _Progress:
    """The bar, what is written so far, the cost said once after the second batch, then a line
    per batch (at most one every UPDATE_EVERY_S, and the last) for the terminal where the user
    waits (ocg/core/progress.py: a notebook's runner shows them)."""

    def __init__(self, state: RunState):
        self.state = state
        self.bar = tqdm(
            total=answers_to_do(state.stores, state.rows, state.samples),
            unit="inst",
            desc=state.spec.name,
            disable=not (state.progress and bars_shown()),  # off a terminal: the say() lines
            smoothing=0.1,
        )
        self.t_start, self.new_tokens, self.written = time.perf_counter(), 0, 0
        self.paced: tuple[float, int] | None = (
            None  # (time, written) after the first batch: the pace leaves out loading
        )
        self.projected, self.said_at = False, 0.0

    def count(self, n: int, new_tokens: int) -> None:
        self.written += n
        self.new_tokens += new_tokens
        now = time.perf_counter()
        elapsed = max(now - self.t_start, 1e-9)
        self.bar.update(n)
        self.bar.set_postfix(
            inst_s=f"{self.written / elapsed:.2f}", tok_s=f"{self.new_tokens / elapsed:.1f}"
        )
        if not self.state.progress:
            return
        total, spec = self.bar.total, self.state.spec
        if self.paced is None:
            self.paced = (now, self.written)
        elif not self.projected and total > self.written:  # the cost, said early (estimate.py)
            say(
                after_a_batch(
                    spec.name,
                    answers=self.written - self.paced[1],
                    seconds=now - self.paced[0],
                    left=total - self.written,
                    batch_check=min(spec.batch_check, total),
                    batch_size=self.state.backend.batch_size,
                    written=self.written,
                    total=total,
                )
            )
            self.projected, self.said_at = True, now
        elif self.written >= total or now - self.said_at >= UPDATE_EVERY_S:
            say(so_far(spec.name, self.written, total, elapsed, self._left_s(now, self.paced)))
            self.said_at = now

    def _left_s(self, now: float, paced: tuple[float, int]) -> float:
        since, before = paced
        return (now - since) / max(self.written - before, 1) * (self.bar.total - self.written)


def _answer_missing(state: RunState) -> tuple[int, int, float]:
    """Each batch with a missing answer generated whole and its missing answers appended:
    (answers written, new tokens, seconds)."""
    progress, checked_revision = _Progress(state), False
    for store, batch in _batches(state):
        missing = {i for i in batch.ids if (i, batch.sample) not in store.done}
        if not missing:
            continue
        outputs = state.backend.generate(
            [state.rendered[i] for i in batch.ids], instance_ids=batch.ids, sample=batch.sample
        )
        constrained.check_forced(state.spec, state.backend, batch.ids, outputs)  # before any write
        if not checked_revision:  # weights are loaded now: the resolved revision is known
            _check_revision(state)
            checked_revision = True
        records = _records(state, batch, outputs)
        progress.count(
            store.append(records),
            sum(r["completion_tokens"] or 0 for r in records if r["instance_id"] in missing),
        )
        check_stop(f"{state.spec.name} {batch.condition} batch {batch.index}")  # resumed later
    progress.bar.close()
    return progress.written, progress.new_tokens, time.perf_counter() - progress.t_start


def _check_revision(state: RunState) -> None:
    revision = state.backend.resolved_revision()
    check_compatible(state.card_path, state.settings.replace(resolved_revision=revision), {})
    state.resolved(revision)


def _grammar_fields(grammar: str | None) -> dict:
    """A constrained answer's record carries the expression it was forced to, and its sha256."""
    return {"grammar": grammar, "grammar_sha256": grammar_sha256(grammar)} if grammar else {}


def _records(state: RunState, batch: Batch, outputs: list[dict]) -> list[dict]:
    """The batch's records, one per output (the store appends only the missing ones)."""
    spec, backend, records = state.spec, state.backend, []
    for row, out in zip(batch.rows, outputs):
        prompt = state.rendered[row.instance_id]
        opens_think = isinstance(prompt, str) and prompt_opens_think(prompt)
        answer, status = extract_answer(out["raw"], spec.answer_extraction, opens_think)
        records.append(
            {
                "instance_id": row.instance_id,
                **({"sample": batch.sample} if backend.sampling else {}),
                "model": spec.name,
                "condition": batch.condition,
                "template_id": int(row.template_id),
                "set_id": row.set_id,
                "perm_index": int(row.perm_index),
                "concepts": list(row.concepts),
                "pos_pattern": row.pos_pattern,
                "prompt": prompt,
                "prompt_sha256": state.hashes[row.instance_id],
                "answer": answer,
                "answer_status": status,
                "answer_source": answer_source(out["raw"], spec.answer_extraction),
                **out,
                **_grammar_fields(backend.grammars.get(row.instance_id)),
                "batch_index": batch.index,
                "planned_batch_size": len(batch.rows),
                "system_mode": backend.system_mode,
                "time_utc": now_utc(),
            }
        )
    return records
