"""Store format 3: the on-disk form of one generation record, about half a format 2 line.

A format 3 line is compact JSON (no spaces, UTF-8 text) that starts with the marker `"f":3`,
names each known field by a short key (LONG_TO_SHORT; docs/DATA.md, "Generation records") and
leaves out what the reader recomputes exactly:
  - condition, template_id, set_id, perm_index: spelled by `instance_id` (ocg.data.instances.instance_id);
  - concepts, pos_pattern: the set's concepts in permutation `perm_index`, from the shipped
    concept sets, while their content is the one pinned here (CONCEPT_SETS_DIGEST);
  - raw: when it equals `answer`.
A field is left out only where its value is the derived one; a derived field goes back just after
the field before it in CANONICAL order, so a record reads with its fields in the order given.
`encode` returns a line only when `decode` gives back exactly the record (values, types and
order, as JSON writes them); otherwise None, and the store writes that record in format 2.
Another field keeps its name (prefixed with `~` where it could be read as a short key).
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import cache

from ...core.errors import OcgInputError
from ...core.files import loads_json
from ...core.frames import INSTANCE_KEY
from ...core.paths import CONCEPT_SETS_FILE
from ...data.concepts import read_concept_sets
from ...data.instances import instance_id as spell_id

MARKER = "f"
FORMAT = 3
LONG_TO_SHORT = {
    "instance_id": "i",
    "sample": "n",
    "model": "m",
    "condition": "c",
    "template_id": "t",
    "set_id": "s",
    "perm_index": "p",
    "concepts": "k",
    "pos_pattern": "q",
    "prompt": "pr",
    "prompt_sha256": "h",
    "answer": "a",
    "answer_status": "as",
    "answer_source": "ao",
    "raw": "r",
    "finish_reason": "fr",
    "prompt_tokens": "pt",
    "completion_tokens": "ct",
    "batch_size": "bs",
    "response_model": "rm",
    "system_fingerprint": "sf",
    "api_notes": "an",
    "grammar": "g",
    "grammar_sha256": "gh",
    "batch_index": "bi",
    "planned_batch_size": "pb",
    "system_mode": "sm",
    "time_utc": "tu",
}
SHORT_TO_LONG = {s: k for k, s in LONG_TO_SHORT.items()}
ABSENT = (
    "z"  # the short keys of derivable fields a record does not have (rare: not one of generate's)
)
ESCAPE = "~"  # an unknown field named like a short key (or "f", "z", or starting with ~) is written ~name
# The order generate writes a record's fields in: a left-out field goes back after its predecessor here.
CANONICAL = [
    "instance_id",
    "sample",
    "model",
    *INSTANCE_KEY,
    "concepts",
    "pos_pattern",
    "prompt",
    "prompt_sha256",
    "answer",
    "answer_status",
    "answer_source",
    "raw",
]
FROM_ID = tuple(INSTANCE_KEY)  # what an instance id spells (ocg/data/instances.py)
FROM_SETS = ("concepts", "pos_pattern")
DERIVABLE = (*FROM_ID, *FROM_SETS, "raw")
# sha256 of the shipped concept sets' content (set_digest): the data format 3 derives concepts from.
# A change to that file must keep a copy of these sets for the stores that left concepts out.
CONCEPT_SETS_DIGEST = "6829b13e47705214bebc97b0f4992d24d0b1b27d27408f4a99c09a03ee16b155"
PINNED_SETS = (
    400  # the digest covers the file's first 400 sets: sets appended after them change nothing
)


def set_digest(sets) -> str:
    """sha256 of each set's id and tagged concepts, in file order (formatting of the file aside)."""
    content = [[s.set_id, [c.tagged for c in s.concepts]] for s in sets]
    return hashlib.sha256(json.dumps(content, separators=(",", ":")).encode()).hexdigest()


@cache
def shipped_sets() -> tuple[dict[str, tuple], str]:
    """(set_id -> its concepts, their digest) of the file's first PINNED_SETS sets: a set appended
    to the file is never derived from (its records keep their concepts), so stores stay readable."""
    sets = read_concept_sets(CONCEPT_SETS_FILE)[:PINNED_SETS]
    return {s.set_id: s.concepts for s in sets}, set_digest(sets)


def _pinned_sets() -> dict[str, tuple] | None:
    sets, digest = shipped_sets()
    return sets if digest == CONCEPT_SETS_DIGEST else None


def _from_id(iid: str) -> tuple | None:
    """(condition, template_id, set_id, perm_index) that `iid` spells, or None."""
    head, _, perm = iid.rpartition("-p")
    cond, sep, rest = head.partition("-t")
    tid, _, set_id = rest.partition("-")
    if not (sep and perm.isascii() and perm.isdigit() and tid.isascii() and tid.isdigit()):
        return None
    fields = (cond, int(tid), set_id, int(perm))
    return fields if spell_id(*fields) == iid else None


def _nth_permutation(items: tuple, index: int) -> list:
    """The `index`-th of itertools.permutations(items)."""
    pool, out = list(items), []
    for left in range(len(pool) - 1, -1, -1):
        pick, index = divmod(index, math.factorial(left))
        out.append(pool.pop(pick))
    return out


def _from_sets(set_id, perm_index, sets) -> tuple | None:
    """(concepts, pos_pattern) of permutation `perm_index` of shipped set `set_id`, or None."""
    concepts = sets.get(set_id) if isinstance(set_id, str) else None
    if (
        concepts is None
        or type(perm_index) is not int
        or not 0 <= perm_index < math.factorial(len(concepts))
    ):
        return None
    order = _nth_permutation(concepts, perm_index)
    return [c.word for c in order], "".join(c.pos for c in order)


def _derived(record: dict, sets) -> dict:
    """The left-out fields' values this record's own fields give (those that can be derived)."""
    out: dict = {}
    iid = record.get("instance_id")
    spelled = _from_id(iid) if isinstance(iid, str) else None
    if spelled:
        out.update(zip(FROM_ID, spelled))
    if sets is not None:
        got = _from_sets(
            record.get("set_id", out.get("set_id")),
            record.get("perm_index", out.get("perm_index")),
            sets,
        )
        if got:
            out.update(zip(FROM_SETS, got))
    if "answer" in record:
        out["raw"] = record["answer"]
    return out


def _same(a, b) -> bool:
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _short(key: str) -> str:
    if key in LONG_TO_SHORT:
        return LONG_TO_SHORT[key]
    return (
        ESCAPE + key
        if key in SHORT_TO_LONG or key in (MARKER, ABSENT) or key.startswith(ESCAPE)
        else key
    )


def _line(record: dict, leave_out: bool) -> str:
    derived = _derived(record, _pinned_sets()) if leave_out else {}
    out: dict[str, object] = {MARKER: FORMAT}
    absent = [LONG_TO_SHORT[k] for k in DERIVABLE if k not in record]
    if absent:
        out[ABSENT] = absent
    for key, value in record.items():
        if key not in derived or not _same(value, derived[key]):
            out[_short(key)] = value
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def encode(record: dict) -> str | None:
    """The record's format 3 line (no newline), or None when no such line reads back exactly."""
    if not all(isinstance(key, str) for key in record):
        return None  # JSON would write the key as text: it would not read back as given
    for leave_out in (True, False):
        try:
            line = _line(record, leave_out)
            if _same(decode(loads_json(line), "check"), record):
                return line
        except (OcgInputError, ValueError, TypeError):
            continue
    return None


def is_format3(obj) -> bool:
    return isinstance(obj, dict) and MARKER in obj


def read_record(obj, where: str):
    """Any store line's object as the record it holds: format 3 decoded, formats 1 and 2 as they are."""
    return decode(obj, where) if is_format3(obj) else obj


def decode(obj: dict, where: str) -> dict:
    """The record a format 3 line holds (fields in the order written), or an error naming `where`."""
    record, absent = _written(obj, where)
    missing = [k for k in DERIVABLE if k not in record and LONG_TO_SHORT[k] not in absent]
    return _put_back(record, missing, where) if missing else record


def _written(obj: dict, where: str) -> tuple[dict, list]:
    """The fields the line writes, under their long names, and its list of absent fields."""
    if obj.get(MARKER) != FORMAT:
        raise OcgInputError(
            where, f"store format {obj.get(MARKER)!r}: this ocg reads formats 1 to 3"
        )
    if next(iter(obj)) != MARKER:
        raise OcgInputError(
            where, f'the format marker "{MARKER}" is not the first field: the file was edited'
        )
    record, items = {}, list(obj.items())[1:]
    absent = obj.get(ABSENT, [])
    if items and items[0][0] == ABSENT:
        items = items[1:]
    if not isinstance(absent, list) or not all(
        a in (LONG_TO_SHORT[k] for k in DERIVABLE) for a in absent
    ):
        raise OcgInputError(
            where, f"field {ABSENT!r} must list short keys of {list(DERIVABLE)}, got {absent!r:.80}"
        )
    for key, value in items:
        if key in LONG_TO_SHORT or key == ABSENT:
            raise OcgInputError(
                where,
                f"field {key!r} in a format 3 line, where "
                + (
                    f"it is written {LONG_TO_SHORT[key]!r}"
                    if key in LONG_TO_SHORT
                    else "it comes only right after the marker"
                )
                + ": the file was edited",
            )
        record[key[1:] if key.startswith(ESCAPE) else SHORT_TO_LONG.get(key, key)] = value
    return record, absent


def _put_back(record: dict, missing: list[str], where: str) -> dict:
    """The record with its `missing` fields derived and put back where CANONICAL places them."""
    sets = _pinned_sets() if any(k in FROM_SETS for k in missing) else None
    if sets is None and any(k in FROM_SETS for k in missing):
        raise OcgInputError(
            where,
            f"concepts left out, to be derived from the concept sets of digest "
            f"{CONCEPT_SETS_DIGEST[:12]}, but the first {PINNED_SETS} sets of "
            f"{CONCEPT_SETS_FILE} now have digest {shipped_sets()[1][:12]}: that file "
            "was edited (a set changed, moved or removed); restore it (git checkout) "
            "and append new sets at its end",
        )
    values = _derived(record, sets)
    for field in missing:
        if field not in values:
            raise OcgInputError(
                where,
                f"field {field!r} is not written and cannot be derived (instance_id "
                f"{str(record.get('instance_id'))[:80]!r}, set {str(record.get('set_id'))[:40]!r}, "
                f"permutation {str(record.get('perm_index'))[:10]}): the file was edited",
            )
    follows = _followers(tuple(k in record for k in CANONICAL), tuple(missing))
    out: dict = {}
    key: str | None = None
    while (key := follows.get(key)) is not None:
        out[key] = values[key]
    for written, value in record.items():
        out[written] = value
        key = written
        while (key := follows.get(key)) is not None:
            out[key] = values[key]
    return out


@cache
def _followers(present: tuple[bool, ...], missing: tuple[str, ...]) -> dict:
    """Where left-out fields go back: field (None: the start) -> the left-out field right after it,
    the last field before it in CANONICAL that the record has, written or put back."""
    have = {k for k, here in zip(CANONICAL, present) if here} | set(missing)
    follows = {}
    for key in missing:
        before = [k for k in CANONICAL[: CANONICAL.index(key)] if k in have]
        follows[before[-1] if before else None] = key
    return follows
