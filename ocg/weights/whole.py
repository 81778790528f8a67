"""Whether a weights file is whole, from its own header: a .safetensors file cut short (a
download or copy stopped, a full disk) is named with its sizes before a loader reads it, where
it would fail with a traceback of the safetensors library."""

from __future__ import annotations

import json
import os
import struct


def safetensors_problem(path: str) -> str | None:
    """Why a .safetensors file cannot be whole, from its header alone (8 bytes of header length,
    the JSON header, then the tensors' bytes up to the largest data_offsets end), or None."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                return f"is truncated ({size:,} bytes, not even a header)"
            (n,) = struct.unpack("<Q", head)
            if 8 + n > size:
                return f"is truncated ({size:,} of at least {8 + n:,} bytes)"
            header = json.loads(fh.read(n))
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    except (ValueError, UnicodeDecodeError):
        return "is no safetensors file (its header is not JSON)"
    if not isinstance(header, dict):
        return "is no safetensors file (its header is not a JSON mapping)"
    ends = [
        t["data_offsets"][1]
        for k, t in header.items()
        if k != "__metadata__"
        and isinstance(t, dict)
        and isinstance(t.get("data_offsets"), list)
        and len(t["data_offsets"]) == 2
        and isinstance(t["data_offsets"][1], int)
    ]
    expected = 8 + n + max(ends, default=0)
    if size < expected:
        return f"is truncated ({size:,} of {expected:,} bytes)"
    if size > expected:
        return f"is longer than its header says ({size:,}, not {expected:,} bytes)"
    return None
