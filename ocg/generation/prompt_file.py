"""Each distinct rendered prompt of a generation store, once (store format 2, docs/DATA.md,
"Generation records"): `<condition>.prompts.jsonl.gz` beside `<condition>.jsonl`, whose records
keep only the prompt's sha256. Prompts differ from one another by a few words (the concepts,
their order), so gzip keeps them in a small fraction of their size.

The file is a series of gzip members, each a block of JSON lines `{"sha256": ..., "prompt": ...}`
(`zcat` reads it), appended with one write and an fsync before any record that names one of its
prompts: a process killed mid-write leaves at most a torn last member, which no record names; it
is skipped on reading and cut before the next write. Every prompt read is checked against its
sha256, so a prompt put back into a record is the one the model was asked.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from ..errors import OcgInputError
from ..io import loads_json
from .appending import append_synced, cut_to
from .chat import prompt_sha256

_PIECE = 1 << 16  # bytes fed to the decompressor at a time (a member's end is found within one)


def _members(data: bytes, path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, text) of each complete gzip member, in order; a torn last one is left out."""
    pos = 0
    while pos < len(data):
        start, unpack, parts = pos, zlib.decompressobj(wbits=31), []
        try:
            while not unpack.eof and pos < len(data):
                piece = data[pos:pos + _PIECE]
                parts.append(unpack.decompress(piece))
                pos += len(piece)
        except zlib.error as exc:
            raise OcgInputError(str(path), f"not gzip from byte {start} ({exc}): the file was edited or "
                                           "corrupted") from None
        if not unpack.eof:
            return  # torn: killed mid-write; no record names its prompts
        pos -= len(unpack.unused_data)
        yield start, pos, b"".join(parts)


def _check_line(line: bytes, where: str) -> tuple[str, object]:
    try:
        entry = loads_json(line)
    except ValueError:
        raise OcgInputError(where, "malformed line (expected {\"sha256\": ..., \"prompt\": ...})") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) \
            or not isinstance(entry.get("prompt"), (str, list)):
        raise OcgInputError(where, "expected an object with a 'sha256' text and a 'prompt' (text or messages)")
    if prompt_sha256(entry["prompt"]) != entry["sha256"]:
        raise OcgInputError(where, f"the prompt's sha256 is not {entry['sha256']}: the file was edited")
    return entry["sha256"], entry["prompt"]


class PromptFile:
    """A store's prompts by sha256; `add` appends those not on disk yet."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._known: set[str] | None = None  # hashes on disk, read on the first `add`

    def _read(self) -> tuple[dict[str, object], int]:
        """(sha256 -> prompt, bytes of complete members)."""
        data = self.path.read_bytes() if self.path.exists() else b""
        prompts, end = {}, 0
        for start, stop, text in _members(data, self.path):
            end = stop
            for lineno, line in enumerate(text.splitlines(), start=1):
                key, prompt = _check_line(line, f"{self.path}: member at byte {start}, line {lineno}")
                prompts[key] = prompt
        return prompts, end

    def read(self) -> dict[str, object]:
        """sha256 -> prompt, every one checked (a torn last member is skipped)."""
        return self._read()[0]

    def cut_torn(self) -> int:
        """Cut a torn last member (killed mid-write); returns the bytes cut."""
        if not self.path.exists():
            return 0
        size = self.path.stat().st_size
        prompts, end = self._read()
        if end < size:
            cut_to(self.path, end)
        self._known = set(prompts)
        return size - end

    def add(self, prompts: dict[str, object]) -> int:
        """Append the prompts (sha256 -> prompt) not on disk yet, as one member; returns how many."""
        if self._known is None:
            self._known = set(self.read())
        fresh = {k: p for k, p in prompts.items() if k not in self._known}
        if not fresh:
            return 0
        lines = "".join(json.dumps({"sha256": k, "prompt": p}, ensure_ascii=False) + "\n" for k, p in fresh.items())
        append_synced(self.path, gzip.compress(lines.encode("utf-8"), compresslevel=6, mtime=0))
        self._known.update(fresh)
        return len(fresh)
