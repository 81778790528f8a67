"""The paper's model families' real chat templates (tests/fixtures/chat_templates) rendered
through ocg's chat code with real instances: system role, pinned date, BOS once, generation
prompt, alternating one-shot turns."""

import datetime as dt
import json
from pathlib import Path

import pytest

from ocg.config.model_registry import DEFAULT_PROMPT_DATE
from ocg.data import build_instances, load_concept_sets, load_templates
from ocg.generation.backends.chat import detect_system_mode, render, template_default_system_prompt
from ocg.weights.embedded import ensure_converted

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "chat_templates"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
# How each family's template opens the assistant turn the model then writes.
ASSISTANT_CUE = {
    "llama3.1": "<|start_header_id|>assistant<|end_header_id|>",
    "llama3.2": "<|start_header_id|>assistant<|end_header_id|>",
    "llama3.3": "<|start_header_id|>assistant<|end_header_id|>",
    "qwen2": "<|im_start|>assistant",
    "qwen2.5": "<|im_start|>assistant",
    "marco-o1": "<|im_start|>assistant",
    "gemma2": "<start_of_turn>model",
    "phi3-mini": "<|assistant|>",
    "phi3-small": "<|assistant|>",
    "phi3-medium": "<|assistant|>",
    "olmo2": "<|assistant|>",
    "tulu3": "<|assistant|>",
    "mistral-v0.1": "[/INST]",
    "mistral-v1": "[/INST]",
    "mistral-v3": "[/INST]",
    "deepseek-r1-distill": "<｜Assistant｜>",
}
EXPECTED_MODE = {"supported": "system", "merged": "system", "raises": "folded", "dropped": "folded"}


@pytest.fixture(scope="module")
def instances():
    sets = load_concept_sets(4)[:1]
    df = build_instances(sets, load_templates(), ["ordered", "ordered_one_shot"], [0])
    return {
        c: json.loads(df[df.condition == c].messages.iloc[5])
        for c in ("ordered", "ordered_one_shot")
    }


@pytest.fixture(scope="module")
def base_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(ensure_converted("smollm2-135m-instruct"))


def tokenizer_for(base, name):
    """The embedded tokenizer wearing a real model's chat template and special tokens."""
    import copy

    tok = copy.deepcopy(base)
    info = MANIFEST[name]
    tok.chat_template = (FIXTURES / name).read_text(encoding="utf-8")
    tok.bos_token = info["bos_token"]
    tok.eos_token = info["eos_token"]
    return tok, info


def today_strings():
    now = dt.datetime.now()
    return {now.strftime(f) for f in ("%d %b %Y", "%Y-%m-%d", "%d %B %Y", "%B %d, %Y", "%b %d %Y")}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_template_conformance(name, base_tokenizer, instances):
    tok, info = tokenizer_for(base_tokenizer, name)
    mode = detect_system_mode(tok)
    assert mode == EXPECTED_MODE[info["system_role"]], info["system_role"]
    adds_bos = (
        info["add_bos_token"] if info["add_bos_token"] is not None else bool(info["bos_token"])
    )
    system_prompt = instances["ordered"][0]["content"]
    for condition, messages in instances.items():
        text = render(tok, messages, mode, DEFAULT_PROMPT_DATE, adds_bos)
        assert not any(s in text for s in today_strings()), "today's date leaked into the prompt"
        if info["date_in_template"]:
            assert "26 Jul 2024" in text  # the pinned date
        bos = info["bos_token"]
        if bos:  # once, at the start (OLMo 2's BOS is also its EOS, which ends the shot's answer)
            assert text.startswith(bos) and not text[len(bos) :].startswith(bos)
            assert text.count(bos) == 1 or (
                bos == info["eos_token"] and condition == "ordered_one_shot"
            )
        assert text.count(system_prompt) == 1  # in its own turn, or folded into the first user turn
        # the prompt ends by opening the assistant's turn (Mistral's [/INST] does so by itself)
        assert text.rstrip().endswith(ASSISTANT_CUE[info["family"]]), text[-60:]
        user = messages[-1]["content"]
        assert text.rindex(user) > text.rindex(system_prompt) - 1
        if condition == "ordered_one_shot":  # user, assistant, user: in this order, each once
            shot_user, shot_answer = messages[1]["content"], messages[2]["content"]
            assert text.index(shot_user) < text.index(shot_answer) < text.rindex(user)
            assert text.count(shot_answer) == 1


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_template_default_system_prompt_is_found(name, base_tokenizer):
    tok, info = tokenizer_for(base_tokenizer, name)
    assert template_default_system_prompt(tok) == info["default_system_prompt"]


def test_llama_template_reads_todays_date_without_the_pin(base_tokenizer):
    """Why the pin exists: transformers gives templates a strftime_now that reads the clock."""
    tok, _ = tokenizer_for(base_tokenizer, "meta-llama--Llama-3.2-3B-Instruct.jinja")
    messages = [{"role": "user", "content": "hi"}]
    unpinned = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert dt.datetime.now().strftime("%d %b %Y") in unpinned
    pinned = render(tok, messages, "system", "2023-01-05")
    assert (
        "Today Date: 05 Jan 2023" in pinned and dt.datetime.now().strftime("%d %b %Y") not in pinned
    )
