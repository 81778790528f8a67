"""What a harness asks: ocg's own instances and chat messages, chosen as a run file chooses them,
so a harness sends the very prompts ocg sends and an imported log is checked against them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ..core.errors import OcgInputError
from ..core.frames import DEFAULT_N_CONCEPTS
from ..data import load_templates
from ..generation.backends.chat import prompt_sha256
from ..generation.selection import select_instances

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_HARNESS_CONDITIONS = ("original", "ordered")


def _listed(name: str, value: object, kind: type) -> tuple | None:
    """A list parameter as a harness passes it: a list, one value, or "a,b" text (`-T x=a,b`)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        items: list = value.split(",")
    else:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
    try:
        return tuple(kind(str(v).strip()) for v in items)
    except ValueError:
        raise OcgInputError(name, f"expected a list of {kind.__name__}, got {value!r}") from None


def _optional_int(name: str, value: object) -> int | None:
    if value is None or value == "" or value == "None":
        return None
    try:
        return int(str(value))
    except ValueError:
        raise OcgInputError(name, f"expected a whole number, got {value!r}") from None


@dataclass(frozen=True)
class Selection:
    """Which instances: a run file's fields of the same names (docs/harnesses.md)."""

    n_concepts: int = DEFAULT_N_CONCEPTS
    conditions: tuple[str, ...] = DEFAULT_HARNESS_CONDITIONS
    template_ids: tuple[int, ...] | None = None
    subset_k: int | None = None
    permutations: int | None = None

    @classmethod
    def given(
        cls,
        *,
        n_concepts: object = DEFAULT_N_CONCEPTS,
        conditions: object = None,
        templates: object = None,
        subset: object = None,
        permutations: object = None,
    ) -> Selection:
        """From a harness's parameters (inspect's `-T`, lm-eval's `--metadata`), text or typed."""
        return cls(
            n_concepts=_optional_int("n_concepts", n_concepts) or DEFAULT_N_CONCEPTS,
            conditions=_listed("conditions", conditions, str) or DEFAULT_HARNESS_CONDITIONS,
            template_ids=_listed("templates", templates, int),
            subset_k=_optional_int("subset", subset),
            permutations=_optional_int("permutations", permutations),
        )

    def as_params(self) -> dict:
        """The parameters `given` reads back (what a log records)."""
        d = asdict(self)
        return {
            "n_concepts": d["n_concepts"],
            "conditions": list(d["conditions"]),
            "templates": None if d["template_ids"] is None else list(d["template_ids"]),
            "subset": d["subset_k"],
            "permutations": d["permutations"],
        }


def select(selection: Selection, *, single_turn: bool = False) -> pd.DataFrame:
    """ocg's instances of the selection; a condition whose grammar is forced at decoding is
    refused (a harness cannot force it), and with `single_turn` a one-shot one (lm-eval)."""
    config = load_templates()
    for name in selection.conditions:
        condition = config.condition(name)
        if condition.constraint:
            raise OcgInputError(
                "conditions",
                f"{name} forces a grammar at decoding time, which no harness applies; "
                "run it with ocg (backend transformers or openai)",
            )
        if single_turn and condition.shot:
            raise OcgInputError(
                "conditions",
                f"{name} primes with an example turn before the instance; lm-eval's task "
                "takes one system and one user turn (original, ordered): use inspect or ocg",
            )
    return select_instances(
        conditions=list(selection.conditions),
        subset_k=selection.subset_k,
        template_ids=None if selection.template_ids is None else list(selection.template_ids),
        n_concepts=selection.n_concepts,
        permutations=selection.permutations,
    )


def messages_of(row) -> list[dict]:
    """The chat messages ocg sends for an instance row (system, [example turns], user)."""
    return json.loads(row["messages"])


def messages_sha256(messages: Iterable[dict]) -> str:
    """The prompt's sha256 as ocg's store records it for a backend sent messages (role and
    content of each turn, nothing else)."""
    return prompt_sha256([{"role": m["role"], "content": m["content"]} for m in messages])
