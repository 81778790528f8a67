"""Answer extraction (docs/METHODS.md, "Answers"): the sentence to score, kept beside the raw output.

Rules, by the model entry's `answer_extraction`:
- plain: the raw text, stripped of surrounding whitespace (the paper scored raw outputs).
- think (DeepSeek-R1 style): the text after the last `</think>`. Without `</think>`, an output
  that opened a think block (or whose prompt already opened one) is a failed answer.
- marco_o1: the text of the last non-empty `<Output>` block (a block runs to its `</Output>`, the
  next `<Output>`, or the end), so a trailing empty or cut-off `<Output>` does not lose the
  answer before it; every block empty: an empty answer. An output with a `<Thought>` but no
  `<Output>` is a failed answer; one with neither tag is taken as plain.
A failed answer is None with a status saying why: counted, never scored as a sentence.
"""

from __future__ import annotations

import re

OK, EMPTY, UNCLOSED_THINK, NO_OUTPUT = "ok", "empty", "unclosed_think", "no_output"
FAILED = (UNCLOSED_THINK, NO_OUTPUT)

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_OUTPUT_OPEN = re.compile(r"<Output>", re.IGNORECASE)
_OUTPUT_CLOSE = re.compile(r"</Output>", re.IGNORECASE)
_THOUGHT = re.compile(r"<Thought>", re.IGNORECASE)


def _result(text: str) -> tuple[str | None, str]:
    text = text.strip()
    return (text, OK) if text else (text, EMPTY)


def _output_blocks(raw: str) -> list[str]:
    """The text of each `<Output>` block: up to its `</Output>`, the next `<Output>`, or the end."""
    opens = list(_OUTPUT_OPEN.finditer(raw))
    blocks = []
    for i, start in enumerate(opens):
        stop = opens[i + 1].start() if i + 1 < len(opens) else len(raw)
        close = _OUTPUT_CLOSE.search(raw, start.end(), stop)
        blocks.append(raw[start.end() : close.start() if close else stop])
    return blocks


def extract_answer(
    raw: str, rule: str = "plain", prompt_opens_think: bool = False
) -> tuple[str | None, str]:
    """(answer, status) for one raw output."""
    if rule == "plain":
        return _result(raw)
    if rule == "think":
        closes = list(_THINK_CLOSE.finditer(raw))
        if closes:
            return _result(raw[closes[-1].end() :])
        if prompt_opens_think or _THINK_OPEN.search(raw):
            return None, UNCLOSED_THINK
        return _result(raw)
    if rule == "marco_o1":
        blocks = _output_blocks(raw)
        if blocks:
            return _result(next((b for b in reversed(blocks) if b.strip()), ""))
        if _THOUGHT.search(raw):
            return None, NO_OUTPUT
        return _result(raw)
    raise ValueError(f"unknown answer_extraction rule {rule!r}")


def answer_source(raw: str, rule: str = "plain") -> str:
    """Where the scored answer came from: 'output_tag' (Marco-o1's <Output>), 'after_think'
    (text after </think>), or 'raw' (the whole output, stripped)."""
    if rule == "marco_o1" and _OUTPUT_OPEN.search(raw):
        return "output_tag"
    if rule == "think" and _THINK_CLOSE.search(raw):
        return "after_think"
    return "raw"


def prompt_opens_think(rendered_prompt: str) -> bool:
    """True when the chat template itself opens a think block (e.g. DeepSeek-R1 distills)."""
    return rendered_prompt.rstrip().lower().endswith("<think>")
