"""Chat prompts through each tokenizer's own template, with the system-role fallback."""

from __future__ import annotations

import hashlib
import json

SYSTEM_MODES = ("system", "folded")
_PROBE = "ocg-system-probe-7f3a91"


def chat_template_sha256(tokenizer) -> str:
    template = tokenizer.chat_template
    if template is None:
        raise ValueError(f"{tokenizer.name_or_path}: the tokenizer has no chat template; ocg "
                         "evaluates instruction-tuned models through their chat templates")
    text = template if isinstance(template, str) else json.dumps(template, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def detect_system_mode(tokenizer) -> str:
    """'system' if the template renders a system turn, else 'folded'.

    Detected, not listed by hand: a template that raises on a system role (Gemma 2, Mistral
    v0.1) or silently drops it both count as rejecting it.
    """
    probe = [{"role": "system", "content": _PROBE}, {"role": "user", "content": "hello"}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False, add_generation_prompt=True)
    except Exception:  # noqa: BLE001 - jinja raise_exception, TemplateError, ValueError alike
        return "folded"
    return "system" if _PROBE in text else "folded"


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


def render(tokenizer, messages: list[dict], mode: str) -> str:
    return tokenizer.apply_chat_template(apply_system_mode(messages, mode), tokenize=False,
                                         add_generation_prompt=True)
