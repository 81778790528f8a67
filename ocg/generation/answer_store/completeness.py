"""Do a model's records match what its run card asked? Missing instances, foreign records, run status.

A record belongs to a condition's asked set when its instance id was asked in that condition and
its condition, template, concept set and permutation are the asked instance's. Anything else
(appended by hand: another set_id, template or condition; an id already in another file) is
foreign: generation does not count it towards completion and scoring leaves it out. The asked
set is rebuilt from the run card's recorded selection and checked against its ids sha256.
With repeated samples (the run card's `sampling.samples` = k) the asked set is every instance
times samples 0..k-1, and a record's key ends with its `sample` (absent: 0).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...core.errors import OcgInputError
from ...core.frames import INSTANCE_KEY, SAMPLE, record_sample, samples_or_zero
from ...core.layout import ModelGenerations
from ...data import ids_hash
from ...data.instances import PERMUTATION_SEED, instance_id, sample_permutations
from ...records import RunCard, RunStatus, Tally

KEY = ("instance_id", *INSTANCE_KEY)
_EXAMPLES = 3


def _samples_of(records: pd.DataFrame) -> list[int]:
    return samples_or_zero(records).tolist()


def asked_keys(rows: pd.DataFrame, samples: int = 1) -> set[tuple]:
    """The keys asked of `rows`: each instance's KEY and a sample index, for each of `samples`."""
    return {(*key, s) for key in zip(*(rows[k].tolist() for k in KEY)) for s in range(samples)}


def record_keys(records: pd.DataFrame) -> list[tuple]:
    """Each record's KEY and its sample (0 when it has none)."""
    return list(zip(*(records[k].tolist() for k in KEY), _samples_of(records)))


def card_samples(card: RunCard) -> int:
    """How many samples per instance a run card asked (1: greedy)."""
    return card.sampling.samples if card.sampling else 1


def foreign_mask(records: pd.DataFrame, asked: dict[str, set[tuple]]) -> pd.Series:
    """True for each record that is not an asked instance of its condition, or repeats an id
    already seen in another condition's file."""
    if records.empty:
        return pd.Series([], dtype=bool)
    not_asked = [key not in asked.get(key[1], set()) for key in record_keys(records)]
    repeated = pd.Series(
        list(zip(records["instance_id"], _samples_of(records))), index=records.index
    ).duplicated()
    return pd.Series(not_asked, index=records.index) | repeated


def tally(asked: set[tuple], records: list[dict]) -> dict:
    """asked / present / missing / foreign counts of one condition (with a few foreign ids)."""
    present, foreign = set(), []
    for r in records:
        key = (*(r.get(k) for k in KEY), record_sample(r))
        if key in asked:
            present.add(key)
        else:
            foreign.append(r.get("instance_id"))
    return {
        "asked": len(asked),
        "present": len(present),
        "missing": len(asked) - len(present),
        "foreign": len(foreign),
        "foreign_examples": foreign[:_EXAMPLES],
    }


def tally_stores(stores: dict, rows: dict[str, pd.DataFrame], samples: int = 1) -> dict[str, Tally]:
    """A run card's `records`: per condition, its store's records against the asked rows (times samples)."""
    return {
        c: Tally.model_validate(
            tally(asked_keys(rows[c], samples), store.read(store.path, prompts=False))
        )
        for c, store in stores.items()
    }


def describe_tally(
    per_condition: dict[str, Tally], samples: int = 1, asked_now: int | None = None
) -> str:
    """'N of M asked instances' of a run card's `records` (answers, with `samples` per instance),
    what this run asked where the folder holds more samples, and the foreign records not counted."""
    line = (
        f"{sum(t.present for t in per_condition.values()):,} of "
        f"{sum(t.asked for t in per_condition.values()):,} asked "
        + (f"answers ({samples} samples of each instance)" if samples > 1 else "instances")
    )
    if asked_now is not None and asked_now < samples:
        line += (
            f"; this run asked {asked_now} sample(s), but the folder holds {samples}: a folder's "
            "samples only grow, and every one of them is counted"
        )
    foreign = {c: t for c, t in per_condition.items() if t.foreign}
    if foreign:
        line += (
            "; not counted, foreign records (not asked: another set, template or condition): "
            + ", ".join(
                f"{c} {t.foreign} (e.g. {', '.join(map(str, t.foreign_examples))})"
                for c, t in foreign.items()
            )
        )
    return line


def _all_present(records: pd.DataFrame, cond: str, sha: str, samples: int) -> set[tuple] | None:
    """The asked keys, when the records of `cond` are exactly its asked set (their ids hash to the
    card's, every id spells its own fields, each sample holds each id once): the usual case,
    checked without rebuilding."""
    mine = records[records["condition"] == cond]
    first = mine[pd.Series(_samples_of(mine), index=mine.index) == 0]
    spelled = [instance_id(*key[1:]) == key[0] for key in zip(*(first[k].tolist() for k in KEY))]
    if (
        all(spelled)
        and not first["instance_id"].duplicated().any()
        and ids_hash(first) == sha
        and set(record_keys(mine)) == (keys := asked_keys(first, samples))
        and len(mine) == len(keys)
    ):
        return keys
    return None


def asked_instances(
    card: RunCard, card_path: Path, records: pd.DataFrame | None = None
) -> dict[str, set[tuple]]:
    """Per condition of the card: the keys of the instances it asked for (rebuilt, hash-checked)."""
    from ..selection import select_instances

    out, samples = {}, card_samples(card)
    for cond, sha in card.instances.items():
        if records is not None and (keys := _all_present(records, cond, sha, samples)) is not None:
            out[cond] = keys
            continue
        sel = card.selection_of(cond)
        rows = None
        if sel is not None:
            try:
                rows = sample_permutations(
                    select_instances(sel.dataset, [cond], sel.subset_k, sel.template_ids),
                    sel.permutations,
                    PERMUTATION_SEED if sel.permutation_seed is None else sel.permutation_seed,
                ).reset_index(drop=True)
            except (OcgInputError, OSError):
                rows = None
        if rows is None or ids_hash(rows) != sha:
            raise OcgInputError(
                str(card_path),
                f"cannot rebuild the instance set of condition {cond!r} "
                "that this run card asked for (its dataset moved or changed?)",
            )
        out[cond] = asked_keys(rows, samples)
    return out


def check_model_dir(model_dir: str | Path, records: pd.DataFrame) -> tuple[dict, pd.Series]:
    """The completeness block of a model's scores, and which records are foreign (left out).

    Without a run card nothing can be checked: the block says so and every record is kept."""
    card_path = ModelGenerations(Path(model_dir)).run_card
    if not card_path.exists():
        return {"run_card": None, "run_status": RunStatus.UNKNOWN.value}, pd.Series(
            False, index=records.index
        )
    card = RunCard.read(card_path)
    asked = asked_instances(card, card_path, records)
    foreign = foreign_mask(records, asked)
    conditions = {}
    for cond in sorted(set(asked) | set(records["condition"])):
        mine = records[records["condition"] == cond]
        mine = mine.assign(**{SAMPLE: _samples_of(mine)}).drop_duplicates(["instance_id", SAMPLE])
        conditions[cond] = tally(asked.get(cond, set()), mine[[*KEY, SAMPLE]].to_dict("records"))
        left_out = records["instance_id"][
            foreign & (records["condition"] == cond)
        ]  # with repeated ids
        conditions[cond]["foreign"] = len(left_out)
        conditions[cond]["foreign_examples"] = left_out.head(
            _EXAMPLES
        ).tolist()  # a repeated id is one too
    totals = {
        k: sum(c[k] for c in conditions.values())
        for k in ("asked", "present", "missing", "foreign")
    }
    return {
        "run_card": str(card_path),
        "run_status": card.status.value,
        **totals,
        "conditions": conditions,
    }, foreign


def asked_records(model_dir: str | Path, records: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The records scoring uses (foreign ones left out) and the completeness block."""
    block, foreign = check_model_dir(model_dir, records)
    kept = records[~foreign].reset_index(drop=True)
    if kept.empty:
        raise OcgInputError(
            str(model_dir),
            "no record is an instance its run card asked for "
            f"({block.get('foreign', 0)} foreign records)",
        )
    return kept, block


def problems(block: dict | None) -> tuple[list[str], list[str]]:
    """(what makes a model's numbers incomplete, what is only worth a note), as readable lines."""
    if not block:
        return [], ["scored before completeness was checked: rescore (ocg score) to check it"]
    if block.get("run_card") is None:
        return [], ["no run_card.json beside the generations: what was asked is unknown"]
    blocking, notes = [], []
    if block["run_status"] != RunStatus.COMPLETE:
        blocking.append(f"the run card says {block['run_status']!r} (generation did not finish)")
    if block["missing"]:
        per = ", ".join(
            f"{c} {v['missing']} of {v['asked']}"
            for c, v in block["conditions"].items()
            if v["missing"]
        )
        blocking.append(f"{block['missing']} of {block['asked']} asked instances missing ({per})")
    if block["foreign"]:
        per = ", ".join(
            f"{c}: {v['foreign']} (e.g. {', '.join(map(str, v['foreign_examples']))})"
            for c, v in block["conditions"].items()
            if v["foreign"]
        )
        notes.append(
            f"{block['foreign']} foreign records (not asked by the run card) left out: {per}"
        )
    return blocking, notes


def describe(block: dict | None) -> str:
    """One line per model for `ocg score` and notebook 02."""
    blocking, notes = problems(block)
    if blocking:
        return "INCOMPLETE: " + "; ".join(blocking + notes)
    if not block or block.get("run_card") is None:
        return "unchecked: " + "; ".join(notes)
    return "; ".join(
        [f"complete: {block['present']:,} of {block['asked']:,} asked instances"] + notes
    )
