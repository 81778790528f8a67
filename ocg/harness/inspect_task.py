"""Ordered CommonGen as an inspect_ai task (`inspect eval ocg/ordered_commongen`): ocg's instances
and chat messages as the dataset, ocg's checks as the scorer, ocg's pooled rates as the metrics.

The selection is a run file's, passed as `-T` parameters (n_concepts, conditions, templates,
subset, permutations); a sample's id is its instance id and its epoch ocg's sample index, so
`ocg import` reads the log back into ocg's store (docs/harnesses.md)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from ..core.frames import DEFAULT_N_CONCEPTS
from .asked import Selection, messages_of, messages_sha256, select
from .verdicts import CHECKS, pooled_rates, verdicts

TASK_NAME = "ordered_commongen"
# ocg's default answer budget (params/models.yaml `max_new_tokens`): a sentence fits well inside
MAX_TOKENS = 128
_ROLES: dict[str, Any] = {
    "system": ChatMessageSystem,
    "user": ChatMessageUser,
    "assistant": ChatMessageAssistant,
}


def chat_messages(messages: list[dict]) -> list[ChatMessage]:
    """ocg's messages as inspect's, turn for turn."""
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


def samples(selection: Selection) -> list[Sample]:
    """One inspect Sample per ocg instance, in ocg's order, keyed by instance id."""
    out = []
    for row in select(selection).to_dict("records"):
        messages = messages_of(row)
        out.append(
            Sample(
                input=chat_messages(messages),
                id=row["instance_id"],
                metadata={
                    "concepts": list(row["concepts"]),
                    "pos_pattern": row["pos_pattern"],
                    "condition": row["condition"],
                    "template_id": int(row["template_id"]),
                    "set_id": row["set_id"],
                    "perm_index": int(row["perm_index"]),
                    "prompt_sha256": messages_sha256(messages),
                },
            )
        )
    return out


def _rate(name: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return pooled_rates(s.score.value for s in scores)[name]  # type: ignore[misc]

    return compute


@metric
def coverage_wo_order() -> Metric:
    """% of answers with every concept, in any order (ocg's `coverage_wo_order`)."""
    return _rate("coverage_wo_order")


@metric
def coverage_w_order() -> Metric:
    """% of answers with every concept in the order given (ocg's `coverage_w_order`)."""
    return _rate("coverage_w_order")


@metric
def ordered_rate() -> Metric:
    """Of the answers with every concept, % in order: a ratio of sums (ocg's `ordered_rate`)."""
    return _rate("ordered_rate")


@metric
def copies_list_rate() -> Metric:
    """Of the in-order answers, % that copy the concept list (ocg/analysis/copies.py)."""
    return _rate("copies_list_rate")


@scorer(metrics=[coverage_wo_order(), coverage_w_order(), ordered_rate(), copies_list_rate()])
def ocg_checks(extraction: str = "plain"):
    """ocg's coverage, order and list-copy checks of the completion (values 0 or 1 per check;
    `answer`: the text checked, as ocg extracts it)."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        row = verdicts(
            [state.output.completion],
            [meta["concepts"]],
            [meta.get("pos_pattern")],
            extraction=extraction,
        ).iloc[0]
        return Score(
            value={check: int(row[check]) for check in CHECKS},
            answer=state.output.completion,
        )

    return score


@task(name=TASK_NAME)
def ordered_commongen(
    n_concepts: int = DEFAULT_N_CONCEPTS,
    conditions: str | list[str] = "original,ordered",
    templates: str | list[int] | None = None,
    subset: int | None = None,
    permutations: int | None = None,
) -> Task:
    """Ordered CommonGen on ocg's instances: `conditions` and `templates` as lists or "a,b";
    `subset`: a run file's subset_k; `permutations`: a seeded sample of orders per set."""
    selection = Selection.given(
        n_concepts=n_concepts,
        conditions=conditions,
        templates=templates,
        subset=subset,
        permutations=permutations,
    )
    return Task(
        dataset=MemoryDataset(samples(selection), name=f"ocg-{TASK_NAME}"),
        solver=generate(),
        scorer=ocg_checks(),
        config=GenerateConfig(max_tokens=MAX_TOKENS),
        metadata={"ocg_selection": selection.as_params()},
    )
