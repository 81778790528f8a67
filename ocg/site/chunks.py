"""The case browser's chunk format: where each concept's highlight lies in an answer (`spans`,
in UTF-16 code units as the page's JavaScript counts), and the script that carries one chunk's
rows as gzip'd JSON in base64 (`chunk_script`; `read_chunk` reads one back in Python, `read_index` a page's index of them)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path


def spans(answer, tokens, positions) -> list[list[int]]:
    """[start, end, concept number] in the answer as written, for each concept's token at
    `positions` (indexes into spaCy's `tokens`, which lie in the answer in order)."""
    if not isinstance(answer, str) or tokens is None or positions is None:
        return []
    offsets, cursor = [], 0
    for token in tokens:
        start = answer.find(token, cursor)
        if start < 0:  # not found as written (cannot happen for spaCy's tokens): no highlight
            return []
        offsets.append(start)
        cursor = start + len(token)
    return [
        [offsets[p], offsets[p] + len(tokens[p]), i + 1]
        for i, p in enumerate(positions)
        if 0 <= p < len(tokens)
    ]


def utf16_spans(answer: str, found: list[list[int]]) -> list[list[int]]:
    """`spans` with code-point offsets turned into UTF-16 code units (a page's string indexes)."""
    if not found or max(answer) < "\U00010000":  # no astral-plane character: the same offsets
        return found
    units = [0]
    for c in answer:
        units.append(units[-1] + (2 if ord(c) >= 0x10000 else 1))
    return [[units[s], units[e], n] for s, e, n in found]


_PACKED = re.compile(r'OCG_CASES\[("[A-Za-z0-9._-]+")\] = \{"gzip": "([A-Za-z0-9+/=]*)"\};\n\Z')


def chunk_script(name: str, payload: dict) -> str:
    """The script that gives the page one chunk: its payload as gzip'd JSON in base64 (nothing in
    base64 can close the script or run)."""
    packed = gzip.compress(
        json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), mtime=0
    )
    return (
        f"window.OCG_CASES = window.OCG_CASES || {{}};\nOCG_CASES[{json.dumps(name)}] = "
        f'{{"gzip": "{base64.b64encode(packed).decode("ascii")}"}};\n'
    )


def read_chunk(path: str | Path) -> dict:
    """A chunk script's payload (fields and rows), as the page reads it."""
    found = _PACKED.search(Path(path).read_text(encoding="ascii"))
    if found is None:
        raise ValueError(f"{path}: not a case-browser chunk written by chunk_script")
    return json.loads(gzip.decompress(base64.b64decode(found.group(2))))


class _IndexScript(HTMLParser):
    def __init__(self):
        super().__init__()
        self.inside, self.text = False, None

    def handle_starttag(self, tag, attrs):
        self.inside = tag == "script" and ("id", "case-index") in attrs

    def handle_data(self, data):
        if self.inside:
            self.text = data

    def handle_endtag(self, tag):
        self.inside = False


def read_index(page: str | Path) -> list[dict]:
    """The chunks' index a case browser page holds (one entry per model, condition, template)."""
    parser = _IndexScript()
    parser.feed(Path(page).read_text(encoding="utf-8"))
    if parser.text is None:
        raise ValueError(f"{page}: not a case browser page written by write_page (no case-index)")
    return json.loads(parser.text)
