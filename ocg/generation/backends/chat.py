"""Chat prompts through each tokenizer's own template: system role, pinned date, BOS once.

What reaches a model must not change with the calendar or the library: see docs/METHODS.md,
"Prompts". Three rules live here:
- the system role is probed per template (a template that raises on it, or drops it, gets the
  system text folded in front of the first user turn), unless the model entry says otherwise;
- every template sees one pinned date: `date_string` (Llama 3.x) and a `strftime_now` that
  formats that date, so no template can read today's date;
- the beginning-of-sequence token appears once: the template's own, else the one the tokenizer
  would add by itself, never both.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json

SYSTEM_MODES = ("system", "folded")
_PROBE = "ocg-system-probe-7f3a91"
_USER_PROBE = "ocg-user-probe-2c84e0"


def chat_template_sha256(tokenizer) -> str:
    template = tokenizer.chat_template
    if template is None:
        raise ValueError(
            f"{tokenizer.name_or_path}: the tokenizer has no chat template; ocg "
            "evaluates instruction-tuned models through their chat templates"
        )
    text = template if isinstance(template, str) else json.dumps(template, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def date_context(prompt_date: str) -> dict:
    """Template variables that pin the calendar: Llama 3.x's `date_string`, and `strftime_now`
    (transformers' global, shadowed here) formatting the pinned date instead of today."""
    day = _dt.datetime.combine(_dt.date.fromisoformat(prompt_date), _dt.time())
    return {"date_string": day.strftime("%d %b %Y"), "strftime_now": day.strftime}


def _apply(
    tokenizer, messages: list[dict], prompt_date: str, add_generation_prompt: bool = True
) -> str:
    return tokenizer.apply_chat_template(
        messages,
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
        **date_context(prompt_date),
    )


def detect_system_mode(tokenizer, prompt_date: str = "2024-07-26") -> str:
    """'system' if the template renders a system turn, else 'folded'.

    Detected, not listed by hand: a template that raises on a system role (Gemma 2, Mistral
    v0.1) or silently drops it both count as rejecting it.
    """
    probe = [{"role": "system", "content": _PROBE}, {"role": "user", "content": "hello"}]
    try:
        text = _apply(tokenizer, probe, prompt_date)
    except Exception:  # noqa: BLE001 - jinja raise_exception, TemplateError, ValueError alike
        return "folded"
    return "system" if _PROBE in text else "folded"


def template_default_system_prompt(tokenizer, prompt_date: str = "2024-07-26") -> str | None:
    """The system text a template writes when given none (Qwen2.5, Marco-o1), else None.

    Found by rendering a user turn with and without a probe system turn: whatever stands where
    the probe would stand is the template's default.
    """
    user = [{"role": "user", "content": _USER_PROBE}]
    try:
        with_sys = _apply(tokenizer, [{"role": "system", "content": _PROBE}] + user, prompt_date)
        without = _apply(tokenizer, user, prompt_date)
    except Exception:  # noqa: BLE001 - a template without a system role has no default either
        return None
    if _PROBE not in with_sys:
        return None
    prefix, suffix = with_sys.split(_PROBE, 1)
    if (
        without.startswith(prefix)
        and without.endswith(suffix)
        and len(without) > len(prefix) + len(suffix)
    ):
        return without[len(prefix) : len(without) - len(suffix)]
    return None


def apply_system_mode(messages: list[dict], mode: str) -> list[dict]:
    """With 'folded', the system text goes in front of the first user turn (blank line between)."""
    if mode == "system" or not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], [dict(m) for m in messages[1:]]
    for turn in rest:
        if turn["role"] == "user":
            turn["content"] = f"{system}\n\n{turn['content']}"
            break
    return rest


class MessagePrompts:
    """Prompts sent as chat messages, not rendered text (API and replay backends): the system
    turn kept or folded (`self.system_mode`: the entry's folded, else system), lengths in
    characters, no template of ours."""

    system_mode = "system"

    def __init__(self, spec):
        self.system_mode = "folded" if spec.system_mode == "folded" else "system"

    def render(self, messages: list[dict]) -> list[dict]:
        return apply_system_mode(messages, self.system_mode)

    def prompt_lengths(self, rendered: list[list[dict]]) -> list[int]:
        return [sum(len(m["content"]) for m in msgs) for msgs in rendered]

    def prompt_settings(self) -> dict:
        return {
            "chat_template_sha256": None,
            "system_mode": self.system_mode,
            "template_default_system_prompt": None,
            "prompt_date": None,
            "bos": None,
        }


def tokenizer_adds_bos(tokenizer) -> bool:
    """Whether the tokenizer puts a BOS token in front of plain text by itself."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return False
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    return bool(ids) and ids[0] == bos


def with_single_bos(text: str, bos_token: str | None, adds_bos: bool) -> tuple[str, str]:
    """(prompt, how BOS got there): the template's BOS kept, else the tokenizer's own added once."""
    if not bos_token:
        return text, "none"
    if text.startswith(bos_token):
        return text, "template"
    if adds_bos:
        return bos_token + text, "added"
    return text, "none"


def bos_placement(tokenizer, prompt_date: str, adds_bos: bool) -> str:
    """'template', 'added' or 'none': where the BOS token of every prompt comes from."""
    text = _apply(tokenizer, [{"role": "user", "content": _USER_PROBE}], prompt_date)
    return with_single_bos(text, tokenizer.bos_token, adds_bos)[1]


def render(
    tokenizer,
    messages: list[dict],
    mode: str,
    prompt_date: str = "2024-07-26",
    adds_bos: bool | None = None,
) -> str:
    """The exact text the model reads (tokenized later without adding special tokens)."""
    text = _apply(tokenizer, apply_system_mode(messages, mode), prompt_date)
    if adds_bos is None:
        adds_bos = tokenizer_adds_bos(tokenizer)
    return with_single_bos(text, tokenizer.bos_token, adds_bos)[0]


def prompt_sha256(rendered) -> str:
    """sha256 of what a model receives: the rendered text, or the API messages as sent."""
    text = (
        rendered
        if isinstance(rendered, str)
        else json.dumps(rendered, ensure_ascii=False, sort_keys=True)
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
