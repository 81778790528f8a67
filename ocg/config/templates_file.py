"""The instruction templates and conditions (params/templates.yaml)."""

from __future__ import annotations

import string
from typing import Annotated, Any, Literal

from pydantic import Field

from ..core.errors import OcgInputError
from .field_types import NAMES_AS_KEYS
from .file_model import ConfigModel, Says, checked

PLACEHOLDERS = ("concepts",)
Constraint = Literal["ordered_regex"]
# _nonempty and _template_ids, as the JSON Schema says them (its keys are text: 0, 1, ...)
TEMPLATE_IDS_SCHEMA = {
    "propertyNames": {"pattern": r"^(?:0|[1-9][0-9]*)$(?!\n)"},
    "minProperties": 1,
}  # the grammars ocg/generation/ordered_grammar.py builds


def _placeholders(where: str, text: str) -> list[tuple[str, str | None, str | None]]:
    try:
        return [
            (f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None
        ]
    except ValueError as exc:
        raise OcgInputError(
            where, f"bad braces in template ({exc}); write literal braces as {{{{ and }}}}"
        ) from None


def check_text(where: str, text: str) -> str:
    if not text.strip():
        raise OcgInputError(where, "expected a non-empty template string")
    parsed = _placeholders(where, text)
    fields = [f for f, _, _ in parsed]
    for f, spec, conv in parsed:
        if spec or conv:  # {concepts:>99} pads, {concepts!r} quotes: not the paper's prompt
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


def _template_ids(where: str, templates: dict) -> None:
    for tid in templates:
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise OcgInputError(f"{where}.{tid}", "template ids must be non-negative integers")


# _check_words, as the JSON Schema says it
WORDS_SCHEMA = {"items": {"type": "string", "pattern": r"^\S(?:[\s\S]*\S)?$(?!\n)"}, "minItems": 1}
Text = Annotated[str, Says("a non-empty template string"), checked(check_text)]


class TemplateTexts(ConfigModel):
    """One template, in both wordings."""

    original: Text
    """FLAN's text; {concepts} is replaced by the concept words joined by spaces."""
    ordered: Text
    """The same, asking for the specified order (paper Table 6)."""


class ConditionSpec(ConfigModel):
    """Which template text an instance uses, and how it is asked."""

    text: Literal["original", "ordered"]
    """The template text: original or ordered."""
    shot: Annotated[bool, Says("true or false")]
    """The one-shot turns precede the instance."""
    constraint: Constraint = None  # type: ignore[assignment]  # None: unset, never null
    """The decoding is forced to a grammar (ordered_regex: the concepts in the asked order)."""


class OneShot(ConfigModel):
    """One-shot priming's example (paper 5.3)."""

    concepts: Annotated[list[Any], checked(_check_words), Field(json_schema_extra=WORDS_SCHEMA)]
    """Its concept words."""
    answer: str
    """Its answer, given as the assistant's turn."""


class TemplatesFile(ConfigModel):
    """Instruction templates of Ordered CommonGen, and its conditions."""

    answer_suffix: str
    """Appended to every rendered instruction, in both conditions."""
    system_prompt: str
    """The fixed system prompt of the paper (Appendix A)."""
    one_shot: OneShot
    """The one-shot example."""
    conditions: Annotated[dict[str, ConditionSpec], Field(json_schema_extra=NAMES_AS_KEYS)]
    """The conditions, by name (the name of their generations file)."""
    templates: Annotated[
        dict[Any, TemplateTexts],
        checked(_nonempty),
        checked(_template_ids),
        Field(json_schema_extra=TEMPLATE_IDS_SCHEMA),
    ]
    """The templates, by id (0-5: FLAN's six)."""
