"""Append-only JSONL of generation records, one file per (model, condition), crash-safe.

Each batch is appended with one write and an fsync, so a process killed at any moment loses
at most the batch in flight. Reading never changes a file. Before writing (under the output
directory's lock, ocg/core/lock.py) a torn last line, killed mid-write, is cut off and reported;
a complete last record that only lacks its newline is kept and given one. A malformed line
anywhere else, a record of the wrong shape, or an id written twice stops with an error naming
file and line (`repair_duplicates` keeps the first record of each id). With repeated samples a
record is keyed by (instance id, `sample`): a record without `sample` is sample 0, as every
record written before samples existed (and every greedy record still) is.

A lone surrogate (e.g. `"\\ud800"` from a replay file or a server's JSON) cannot be written as
UTF-8: it is written as U+FFFD, and scoring flags the answer (`replaced_chars`).

Store format 2 (docs/DATA.md, "Generation records"): a record's rendered `prompt` is written once
per distinct prompt to the prompt file beside the store (prompt_file.py), before the record, and
the record keeps its `prompt_sha256`; reading puts the prompt back where it stood, so a record
reads as it was given. Format 3 (record_format.py) writes that record in short keys, compact, without
the fields its instance id, the shipped concept sets and its answer give back exactly; a record
whose format 3 line would not read back as given is written in format 2. Format 1 records (the
prompt inline, as written before) and format 2 ones read unchanged, also mixed in one store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ...core.errors import OcgInputError
from ...core.files import atomic_path, loads_json, refuse_link
from ...core.frames import record_sample
from ...core.layout import ModelGenerations
from ..backends.chat import prompt_sha256
from .appending import append_synced, cut_to
from .record_format import MARKER, encode, read_record
from .record_shape import (
    check_record,
    describe_key,
    prompt_file,
    record_key,
    refers,
    split_prompt,
    with_prompts,
)

STORE_FORMAT = 3  # 1: every record with its prompt inline; 2: prompts once, in the prompt file;
# 3: as 2, in short keys without the derivable fields (record_format.py)


def _read_lines(path: Path) -> tuple[bytes, list[bytes]]:
    data = path.read_bytes() if path.exists() else b""
    return data, data.splitlines(keepends=True)


def _writable(line: str) -> str:
    """The line, each lone surrogate (not encodable as UTF-8) replaced by U+FFFD."""
    try:
        line.encode("utf-8")
        return line
    except UnicodeEncodeError:  # utf-16 pairs surrogates that belong together, replaces the rest
        return line.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _line(record: dict) -> str:
    """The record's line: format 3 where it reads back as given, else format 2 (never one a
    reader would take for format 3)."""
    line = encode(record)
    if line is None:
        if MARKER in record:
            raise ValueError(
                f"{describe_key(record_key(record))}: a record with a field {MARKER!r} that format 3 "
                "cannot write would read as format 3 in format 2"
            )
        line = json.dumps(record, ensure_ascii=False)
    return _writable(line) + "\n"


class GenerationStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.prompts = prompt_file(self.path)
        self.done: set[tuple[str, int]] = {
            record_key(r) for r in self.read(self.path, prompts=False)
        }  # (id, sample)

    # -- reading (never writes) -------------------------------------------------------------
    def _tail_state(self) -> tuple[int, bool]:
        """(bytes of a torn last line, whether a complete last line lacks its newline)."""
        data, lines = _read_lines(self.path)
        if not lines or data.endswith(b"\n"):
            return 0, False
        try:
            loads_json(lines[-1])
        except ValueError:
            return len(lines[-1]), False
        return 0, True

    def records(self) -> list[dict]:
        """Every complete record, checked; a torn last line (killed mid-write) is skipped."""
        return self.read(self.path)

    @staticmethod
    def read(path: Path, prompts: bool = True) -> list[dict]:
        """The records of a store file, without opening it for writing (one pass), each with its
        prompt (`prompts=False`: format 2 records without it, as on disk)."""
        path = Path(path)
        data, lines = _read_lines(path)
        out: list[dict] = []
        seen: dict[tuple, int] = {}
        offset = 0
        for lineno, line in enumerate(lines, start=1):
            where = f"{path}:{lineno}"
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise OcgInputError(
                    where,
                    f"not UTF-8: byte offset {offset + exc.start} of the file "
                    f"is 0x{line[exc.start]:02x}",
                ) from None
            offset += len(line)
            if not text.strip():
                raise OcgInputError(where, "empty line: the file was edited")
            try:
                record = loads_json(text)
            except ValueError:
                if lineno == len(lines) and not data.endswith(b"\n"):
                    break  # torn tail: repaired before the next write
                raise OcgInputError(
                    where,
                    "malformed record (not a torn last line): the file was edited or corrupted",
                ) from None
            record = check_record(read_record(record, where), where)
            key = record_key(record)
            if key in seen:
                raise OcgInputError(
                    where,
                    f"{describe_key(key)} written twice (first on line {seen[key]}); "
                    f"`ocg repair {path.parent}` keeps the first record",
                )
            seen[key] = lineno
            out.append(record)
        return with_prompts(path, out, list(seen.values())) if prompts else out

    # -- writing (under the directory lock) ---------------------------------------------------
    def prepare_for_append(self) -> int:
        """Cut a torn last line (and a torn last block of the prompt file) and end a complete
        line with a newline; returns the store's bytes cut."""
        self.prompts.cut_torn()
        torn, missing_newline = self._tail_state()
        if torn:
            cut_to(self.path, self.path.stat().st_size - torn)
        elif missing_newline:
            append_synced(self.path, b"\n")
        return torn

    def add_prompts(self, prompts) -> int:
        """Write these prompts (rendered texts or messages) to the prompt file now, in one block,
        ahead of the records that will name them (a run writes all it will ask, once)."""
        return self.prompts.add({prompt_sha256(p): p for p in prompts})

    def append(self, records: list[dict]) -> int:
        """Append the records whose (id, sample) is not on disk yet, in one write, their prompts
        first (those the prompt file lacks, in one block); returns how many records."""
        fresh = [r for r in records if record_key(r) not in self.done]
        if not fresh:
            return 0
        prompts: dict[str, object] = {}
        fresh = [split_prompt(r, prompts) for r in fresh]
        self.prompts.add(prompts)  # on disk before any record that names them
        append_synced(self.path, "".join(_line(r) for r in fresh).encode("utf-8"))
        self.done.update(record_key(r) for r in fresh)
        return len(fresh)


def repair_duplicates(path: str | Path) -> dict:
    """Rewrite a store keeping the first record of every id (and no torn tail); the original is
    kept beside it as `<name>.bak`. Returns what was removed."""
    path = Path(path)
    data, lines = _read_lines(path)
    kept, dropped, seen = [], [], set()
    for lineno, line in enumerate(lines, start=1):
        try:
            record = loads_json(line)
        except ValueError:
            if lineno == len(lines) and not data.endswith(b"\n"):
                dropped.append({"line": lineno, "why": "torn last line"})
                continue
            raise OcgInputError(
                f"{path}:{lineno}",
                "malformed record; repair keeps records, it cannot guess this one",
            ) from None
        record = read_record(record, f"{path}:{lineno}")
        key = (
            (record.get("instance_id"), record_sample(record)) if isinstance(record, dict) else None
        )
        if key in seen:
            if key is None:  # a second line that is not an object: a TypeError, as ever (key[0])
                raise TypeError(f"{path}:{lineno}: a second line that is not a JSON object")
            dropped.append(
                {
                    "line": lineno,
                    "why": f"second record of {key[0]}" + (f" sample {key[1]}" if key[1] else ""),
                }
            )
            continue
        seen.add(key)
        kept.append(line if line.endswith(b"\n") else line + b"\n")
    if dropped:
        backup = path.with_name(path.name + ".bak")
        refuse_link(backup, path)
        with atomic_path(
            backup
        ) as tmp:  # a link put there since the check is replaced, not written through
            tmp.write_bytes(data)
        with atomic_path(path) as tmp:
            tmp.write_bytes(b"".join(kept))
    return {"file": str(path), "kept": len(kept), "removed": dropped}


def missing_prompts(path: str | Path) -> set[str]:
    """sha256 of the prompts the store's records name that its prompt file lacks (removed or
    edited): `ocg repair` reports them; a rerun of the same generation re-adds those it renders
    again with the same sha256."""
    path = Path(path)
    named = {r["prompt_sha256"] for r in GenerationStore.read(path, prompts=False) if refers(r)}
    return named - set(prompt_file(path).read()) if named else set()


def read_generations(model_dir: str | Path, conditions=None, prompts: bool = True) -> pd.DataFrame:
    """All records of one model directory as a DataFrame (`prompts=False`: format 2 records
    without their prompt, for readers that do not show it)."""
    model_dir = Path(model_dir)
    frames = []
    for path in ModelGenerations(model_dir).stores():
        if conditions is None or path.stem in conditions:
            frames.append(pd.DataFrame(GenerationStore.read(path, prompts)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
