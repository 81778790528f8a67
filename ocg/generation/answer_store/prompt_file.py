"""Each distinct rendered prompt of a generation store, once (store format 2, docs/DATA.md,
"Generation records"): `<condition>.prompts.jsonl.gz` beside `<condition>.jsonl`, whose records
keep only the prompt's sha256. Prompts differ from one another by a few words (the concepts,
their order), so gzip keeps them in a small fraction of their size.

The file is a series of gzip members, each a block of JSON lines, one prompt each (a text, or
the messages sent to an API; `zcat` reads it), keyed by the sha256 the reader computes (a stored
hash would be the least compressible part of the file), appended with one write and an fsync before any record that names one of its
prompts: a process killed mid-write leaves at most a torn last member, which no record names; it
is skipped on reading and cut before the next write. A record names its prompt by sha256, so a
prompt put back into a record is the one the model was asked.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from ...core.errors import OcgInputError
from ...core.files import loads_json, refuse_link
from ..backends.chat import prompt_sha256
from .appending import append_synced, cut_to

_PIECE = 1 << 16  # bytes fed to the decompressor at a time (a member's end is found within one)


def _members(data: bytes, path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, text) of each complete gzip member, in order; a torn last one is left out."""
    pos = 0
    while pos < len(data):
        start, unpack, parts = pos, zlib.decompressobj(wbits=31), []
        try:
            while not unpack.eof and pos < len(data):
                piece = data[pos : pos + _PIECE]
                parts.append(unpack.decompress(piece))
                pos += len(piece)
        except zlib.error as exc:
            raise OcgInputError(
                str(path), f"not gzip from byte {start} ({exc}): the file was edited or corrupted"
            ) from None
        if not unpack.eof:
            return  # torn: killed mid-write; no record names its prompts
        pos -= len(unpack.unused_data)
        yield start, pos, b"".join(parts)


def _check_line(line: bytes, where: str) -> tuple[str, object]:
    try:
        prompt = loads_json(line)
    except ValueError:
        raise OcgInputError(
            where, "malformed line (expected one prompt as JSON: a text or a list of messages)"
        ) from None
    if not isinstance(prompt, (str, list)):
        raise OcgInputError(
            where, f"expected a prompt (a text or a list of messages), got {type(prompt).__name__}"
        )
    return prompt_sha256(prompt), prompt


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
                key, prompt = _check_line(
                    line, f"{self.path}: member at byte {start}, line {lineno}"
                )
                prompts[key] = prompt
        return prompts, end

    def read(self) -> dict[str, object]:
        """sha256 -> prompt, every one checked (a torn last member is skipped)."""
        return self._read()[0]

    def cut_torn(self) -> int:
        """Cut a torn last member (killed mid-write); returns the bytes cut."""
        refuse_link(self.path)
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
            refuse_link(self.path)  # not even read through a link ocg would then write through
            self._known = set(self.read())
        fresh = {k: p for k, p in prompts.items() if k not in self._known}
        if not fresh:
            return 0
        lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in fresh.values())
        append_synced(self.path, gzip.compress(lines.encode("utf-8"), compresslevel=6, mtime=0))
        self._known.update(fresh)
        return len(fresh)
