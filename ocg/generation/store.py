"""Append-only JSONL of generation records, one file per (model, condition), crash-safe.

Each batch is appended with one write and an fsync, so a process killed at any moment loses
at most the batch in flight. A torn last line (killed mid-write) is cut off on open; a
malformed line anywhere else is corruption and stops with an error naming file and line.
Ids already on disk are never written again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import OcgInputError


class GenerationStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.repaired_bytes = self._repair_torn_tail()
        self.done: set[str] = {r["instance_id"] for r in self.records()}

    def _repair_torn_tail(self) -> int:
        """Cut an incomplete last line (no newline, or not JSON); returns bytes removed."""
        if not self.path.exists():
            return 0
        data = self.path.read_bytes()
        if not data:
            return 0
        keep = len(data)
        if not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
        else:
            last_start = data.rfind(b"\n", 0, len(data) - 1) + 1
            try:
                json.loads(data[last_start:])
            except ValueError:
                keep = last_start
        if keep < len(data):
            with self.path.open("r+b") as fh:
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
        return len(data) - keep

    def records(self) -> list[dict]:
        if not self.path.exists():
            return []
        out, seen = [], set()
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    record = json.loads(line)
                except ValueError:
                    raise OcgInputError(f"{self.path}:{lineno}", "malformed record (not a torn "
                                        "last line): the file was edited or corrupted") from None
                iid = record.get("instance_id")
                if iid in seen:
                    raise OcgInputError(f"{self.path}:{lineno}", f"instance {iid} written twice")
                seen.add(iid)
                out.append(record)
        return out

    def append(self, records: list[dict]) -> int:
        """Append the records whose ids are not on disk yet, in one write; returns how many."""
        fresh = [r for r in records if r["instance_id"] not in self.done]
        if not fresh:
            return 0
        payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in fresh).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done.update(r["instance_id"] for r in fresh)
        return len(fresh)
