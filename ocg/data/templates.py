"""Instruction templates and conditions, read from params/templates.yaml and checked (schema.Field)."""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from ..errors import OcgInputError
from ..frames import unknown_template
from ..io import read_yaml
from ..names import check_name
from ..paths import TEMPLATES_FILE
from ..schema import Field, check_fields

PLACEHOLDERS = ("concepts",)
# The default conditions, named once: what a dataset is built with, and what a model generates.
DEFAULT_CONDITIONS = ("original", "ordered", "ordered_one_shot")
GENERATE_CONDITIONS = ("original", "ordered")


@dataclass(frozen=True)
class Condition:
    name: str
    text: str  # which template text: "original" or "ordered"
    shot: bool  # one-shot priming turns before the instance
    constraint: str | None = (
        None  # decoding forced to a grammar (ocg/generation/ordered_grammar.py)
    )


@dataclass(frozen=True)
class TemplateConfig:
    templates: dict[int, dict[str, str]]  # id -> {"original": ..., "ordered": ...}
    conditions: dict[str, Condition]
    answer_suffix: str
    system_prompt: str
    shot_concepts: tuple[str, ...]
    shot_answer: str
    source: str

    def template(self, template_id: int, condition: str) -> str:
        cond = self.condition(condition)
        if template_id not in self.templates:
            raise unknown_template(f"{self.source}: templates", template_id, self.templates)
        return self.templates[template_id][cond.text]

    def condition(self, name: str) -> Condition:
        if name not in self.conditions:
            raise OcgInputError(
                f"{self.source}: conditions",
                f"unknown condition {name!r}; known: {sorted(self.conditions)}",
            )
        return self.conditions[name]

    def render(self, template_id: int, condition: str, words: list[str] | tuple[str, ...]) -> str:
        """The user instruction: template with the words joined by single spaces, plus suffix."""
        text = self.template(template_id, condition)
        return text.format(concepts=" ".join(words)) + self.answer_suffix

    def messages(self, template_id: int, condition: str, words) -> list[dict[str, str]]:
        """Chat turns: system, the one-shot user/assistant pair if the condition has it, user."""
        turns = [{"role": "system", "content": self.system_prompt}]
        if self.condition(condition).shot:
            turns.append(
                {"role": "user", "content": self.render(template_id, condition, self.shot_concepts)}
            )
            turns.append({"role": "assistant", "content": self.shot_answer})
        turns.append({"role": "user", "content": self.render(template_id, condition, words)})
        return turns


def _check_text(where: str, text: str) -> str:
    if not text.strip():
        raise OcgInputError(where, "expected a non-empty template string")
    try:
        parsed = [
            (f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None
        ]
    except ValueError as exc:
        raise OcgInputError(
            where, f"bad braces in template ({exc}); write literal braces as {{{{ and }}}}"
        ) from None
    fields = [f for f, _, _ in parsed]
    for f, spec, conv in parsed:
        if (
            spec or conv
        ):  # {concepts:>99} pads, {concepts!r} quotes: the prompt is no longer the paper's
            raise OcgInputError(
                where,
                f"placeholder {{{f}{'!' + conv if conv else ''}{':' + spec if spec else ''}}} "
                "has a format spec or conversion; expected a plain {concepts}",
            )
    unknown = sorted({f for f in fields if f not in PLACEHOLDERS})
    if unknown:
        raise OcgInputError(
            where,
            f"unknown placeholder(s) {', '.join('{' + f + '}' for f in unknown)}; "
            f"allowed: {{concepts}}",
        )
    if fields.count("concepts") != 1:
        raise OcgInputError(
            where,
            f"expected exactly one {{concepts}} placeholder, found {fields.count('concepts')}",
        )
    return text


def _check_words(where: str, words: list) -> None:
    if not words or not all(isinstance(w, str) and w.strip() and w == w.strip() for w in words):
        raise OcgInputError(where, f"got {words!r:.80}; expected a non-empty list of words")


def _nonempty(where: str, mapping: dict) -> None:
    if not mapping:
        raise OcgInputError(where, "empty; expected at least one template")


TEXT = Field(str, required=True, check=_check_text, expected="a non-empty template string")
FILE_FIELDS = {
    "answer_suffix": Field(str, required=True),
    "system_prompt": Field(str, required=True),
    "one_shot": Field(dict, required=True),
    "conditions": Field(dict, required=True),
    "templates": Field(dict, required=True, check=_nonempty),
}
TEMPLATE_FIELDS = {"original": TEXT, "ordered": TEXT}
CONSTRAINTS = ("ordered_regex",)  # the grammars ocg/generation/ordered_grammar.py builds
CONDITION_FIELDS = {
    "text": Field(str, required=True, choices=tuple(TEMPLATE_FIELDS)),
    "shot": Field(bool, required=True, expected="true or false"),
    "constraint": Field(str, choices=CONSTRAINTS),
}
SHOT_FIELDS = {
    "concepts": Field(list, required=True, check=_check_words),
    "answer": Field(str, required=True),
}


def load_templates(path: str | Path = TEMPLATES_FILE) -> TemplateConfig:
    path = Path(path)
    src = str(path)
    raw = check_fields(f"{src}:", read_yaml(path), FILE_FIELDS)
    templates: dict[int, dict[str, str]] = {}
    for tid, texts in raw["templates"].items():
        where = f"{src}: templates.{tid}"
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise OcgInputError(where, "template ids must be non-negative integers")
        templates[tid] = check_fields(where, texts, TEMPLATE_FIELDS)
    conditions: dict[str, Condition] = {}
    for name, spec in raw["conditions"].items():
        check_name(f"{src}: conditions", name)  # it names the generations file <condition>.jsonl
        spec = check_fields(f"{src}: conditions.{name}", spec, CONDITION_FIELDS)
        conditions[name] = Condition(name, spec["text"], spec["shot"], spec.get("constraint"))
    shot = check_fields(f"{src}: one_shot", raw["one_shot"], SHOT_FIELDS)
    return TemplateConfig(
        templates=templates,
        conditions=conditions,
        answer_suffix=raw["answer_suffix"],
        system_prompt=raw["system_prompt"],
        shot_concepts=tuple(shot["concepts"]),
        shot_answer=shot["answer"],
        source=src,
    )
