"""Instruction templates and conditions, read from params/templates.yaml and checked
(ocg/config/templates_file.py, TemplatesFile)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config.file_model import validate
from ..config.templates_file import TemplatesFile
from ..core.errors import OcgInputError
from ..core.files import read_yaml
from ..core.frames import unknown_template
from ..core.names import check_name
from ..core.paths import TEMPLATES_FILE

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


def load_templates(path: str | Path = TEMPLATES_FILE) -> TemplateConfig:
    path = Path(path)
    src = str(path)
    raw = read_yaml(path)
    validate(TemplatesFile, raw, f"{src}:")
    for name in raw["conditions"]:
        check_name(f"{src}: conditions", name)  # it names the generations file <condition>.jsonl
    conditions = {
        name: Condition(name, spec["text"], spec["shot"], spec.get("constraint"))
        for name, spec in raw["conditions"].items()
    }
    return TemplateConfig(
        templates={tid: dict(texts) for tid, texts in raw["templates"].items()},
        conditions=conditions,
        answer_suffix=raw["answer_suffix"],
        system_prompt=raw["system_prompt"],
        shot_concepts=tuple(raw["one_shot"]["concepts"]),
        shot_answer=raw["one_shot"]["answer"],
        source=src,
    )
