"""Instruction templates and conditions, read from params/templates.yaml and validated."""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from ..errors import OcgInputError
from ..io import read_yaml
from ..names import check_name
from ..paths import TEMPLATES_FILE

PLACEHOLDERS = ("concepts",)


@dataclass(frozen=True)
class Condition:
    name: str
    text: str  # which template text: "original" or "ordered"
    shot: bool  # one-shot priming turns before the instance


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
            raise OcgInputError(f"{self.source}: templates", f"unknown template id {template_id!r}; "
                                f"known: {sorted(self.templates)}")
        return self.templates[template_id][cond.text]

    def condition(self, name: str) -> Condition:
        if name not in self.conditions:
            raise OcgInputError(f"{self.source}: conditions", f"unknown condition {name!r}; "
                                f"known: {sorted(self.conditions)}")
        return self.conditions[name]

    def render(self, template_id: int, condition: str, words: list[str] | tuple[str, ...]) -> str:
        """The user instruction: template with the words joined by single spaces, plus suffix."""
        text = self.template(template_id, condition)
        return text.format(concepts=" ".join(words)) + self.answer_suffix

    def messages(self, template_id: int, condition: str, words) -> list[dict[str, str]]:
        """Chat turns: system, the one-shot user/assistant pair if the condition has it, user."""
        turns = [{"role": "system", "content": self.system_prompt}]
        if self.condition(condition).shot:
            turns.append({"role": "user",
                          "content": self.render(template_id, condition, self.shot_concepts)})
            turns.append({"role": "assistant", "content": self.shot_answer})
        turns.append({"role": "user", "content": self.render(template_id, condition, words)})
        return turns


def _check_text(text: object, where: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise OcgInputError(where, "expected a non-empty template string")
    try:
        parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise OcgInputError(where, f"bad braces in template ({exc}); write literal braces as "
                                   "{{ and }}") from None
    fields = [f for f, _, _ in parsed]
    for f, spec, conv in parsed:
        if spec or conv:  # {concepts:>99} pads, {concepts!r} quotes: the prompt is no longer the paper's
            raise OcgInputError(where, f"placeholder {{{f}{'!' + conv if conv else ''}{':' + spec if spec else ''}}} "
                                       "has a format spec or conversion; expected a plain {concepts}")
    unknown = sorted({f for f in fields if f not in PLACEHOLDERS})
    if unknown:
        raise OcgInputError(where, f"unknown placeholder(s) {', '.join('{'+f+'}' for f in unknown)}; "
                                   f"allowed: {{concepts}}")
    if fields.count("concepts") != 1:
        raise OcgInputError(where, f"expected exactly one {{concepts}} placeholder, found "
                                   f"{fields.count('concepts')}")
    return text


def _require(mapping: dict, key: str, kind: type, where: str):
    if key not in mapping:
        raise OcgInputError(where, f"missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise OcgInputError(f"{where}.{key}", f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def load_templates(path: str | Path = TEMPLATES_FILE) -> TemplateConfig:
    path = Path(path)
    raw = read_yaml(path)
    src = str(path)
    if not isinstance(raw, dict):
        raise OcgInputError(src, "expected a mapping at the top level")
    known_keys = {"answer_suffix", "system_prompt", "one_shot", "conditions", "templates"}
    extra = sorted(set(raw) - known_keys)
    if extra:
        raise OcgInputError(src, f"unknown key(s) {extra}; expected {sorted(known_keys)}")

    templates: dict[int, dict[str, str]] = {}
    if not _require(raw, "templates", dict, src):
        raise OcgInputError(f"{src}: templates", "empty; expected at least one template")
    for tid, texts in raw["templates"].items():
        where = f"{src}: templates.{tid}"
        if not isinstance(tid, int) or tid < 0:
            raise OcgInputError(where, "template ids must be non-negative integers")
        if not isinstance(texts, dict) or set(texts) != {"original", "ordered"}:
            raise OcgInputError(where, "expected exactly the keys 'original' and 'ordered'")
        templates[tid] = {k: _check_text(v, f"{where}.{k}") for k, v in texts.items()}

    conditions: dict[str, Condition] = {}
    for name, spec in _require(raw, "conditions", dict, src).items():
        check_name(f"{src}: conditions", name)  # it names the generations file <condition>.jsonl
        where = f"{src}: conditions.{name}"
        if not isinstance(spec, dict) or set(spec) != {"text", "shot"}:
            raise OcgInputError(where, "expected exactly the keys 'text' and 'shot'")
        if spec["text"] not in ("original", "ordered"):
            raise OcgInputError(f"{where}.text", f"got {spec['text']!r}; expected 'original' or 'ordered'")
        if not isinstance(spec["shot"], bool):
            raise OcgInputError(f"{where}.shot", "expected true or false")
        conditions[name] = Condition(name, spec["text"], spec["shot"])

    shot = _require(raw, "one_shot", dict, src)
    shot_concepts = _require(shot, "concepts", list, f"{src}: one_shot")
    if not shot_concepts or not all(isinstance(w, str) and w.strip() and w == w.strip() for w in shot_concepts):
        raise OcgInputError(f"{src}: one_shot.concepts", f"got {shot_concepts!r:.80}; expected a non-empty "
                                                         "list of words")
    shot_answer = _require(shot, "answer", str, f"{src}: one_shot")
    return TemplateConfig(
        templates=templates,
        conditions=conditions,
        answer_suffix=_require(raw, "answer_suffix", str, src),
        system_prompt=_require(raw, "system_prompt", str, src),
        shot_concepts=tuple(shot_concepts),
        shot_answer=shot_answer,
        source=src,
    )
