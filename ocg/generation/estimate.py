"""What a generation run will still cost, said early: after its second batch (the first may
include loading the weights), the time the rest should take at that pace and the batch-1 check's
bound; after the check's first answer, the check's own pace. A researcher then knows whether to
wait, and that `batch_check: 0` skips the check (one demo run spent 8.5 minutes on the check beside 16 of
generation, foreseen nowhere)."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """1 h 05 min, 12 min, 40 s: a projection's precision, no more."""
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min" if seconds >= 120 else f"{seconds} s"


def after_a_batch(
    model: str, *, answers: int, seconds: float, left: int, batch_check: int, batch_size: int
) -> str:
    """The projection printed once, after the second batch: `answers` took `seconds`."""
    pace = seconds / max(answers, 1)
    line = (
        f"{model}: {answers} answers in {duration(seconds)}; the {left} left, at this pace: about "
        f"{duration(pace * left)} (prompts run longest first: the later ones go faster)"
    )
    if batch_check and batch_size > 1:
        per_batch = pace * batch_size
        line += (
            f"; then the batch-1 check regenerates {batch_check} answers one at a time: at most about "
            f"{duration(per_batch * batch_check)} (a batch's time each; `batch_check: 0` in the models "
            "file skips it)"
        )
    return line


def batch_check_pace(model: str, seconds: float, n: int) -> str:
    """The check's projection, after its first answer took `seconds`."""
    return (
        f"{model}: batch-1 check: one answer alone in {duration(seconds)}; {n} in all: about "
        f"{duration(seconds * n)}"
    )
