"""What a generation run will still cost, said early: after its second batch (the first may
include loading the weights), the time the rest should take at that pace and the batch-1 check's
bound; after the check's first answer, the check's own pace. A researcher then knows whether to
wait, and that `batch_check: 0` skips the check (one demo run spent 8.5 minutes on the check beside 16 of
generation, foreseen nowhere)."""

from __future__ import annotations

from ..core.progress import duration

__all__ = ["after_a_batch", "batch_check_pace", "batch_check_result", "duration", "so_far"]


def after_a_batch(
    model: str,
    *,
    answers: int,
    seconds: float,
    left: int,
    batch_check: int,
    batch_size: int,
    written: int,
    total: int,
) -> str:
    """The projection printed once, after the second batch: `written` of `total` answers done
    (this run's), of which the last `answers` took `seconds` (the pace: the first batch, which
    may include loading, left out)."""
    pace = seconds / max(answers, 1)
    line = (
        f"{model}: {written} of {total} answers done, {answers} in the last {duration(seconds)}; "
        f"the {left} left, at this pace: about {duration(pace * left)} (prompts run longest "
        "first: the later ones go faster)"
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


def so_far(model: str, written: int, total: int, seconds: float, left_s: float) -> str:
    """A batch's progress line: answers written of those to do, the time so far and what is left
    at the pace since the first batch (the check after it, if any, not counted)."""
    if written >= total:
        return f"{model}: {written} of {total} answers, in {duration(seconds)}"
    return (
        f"{model}: {written} of {total} answers in {duration(seconds)}; "
        f"about {duration(left_s)} left at this pace"
    )


def batch_check_result(model: str, differ: int, checked: int, batch_size: int) -> str:
    """The check's finding, with what it measured and over how many answers."""
    return (
        f"{model}: batch-1 check: {differ} of {checked} answers regenerated alone differ from "
        f"the same prompts' answers in batches of {batch_size}"
    )
