"""What a fake OpenAI-compatible judge reads from a request, and how it replies: the sentence and
the nonce as the rubric gives them (the nonce from the rubric's own reply line, after the
sentence, so nothing the answer writes is taken for it)."""

import html
import json
import re

_SENTENCE = re.compile(r"\n<sentence>(.*)</sentence>\n", re.S)
_NONCE = re.compile(r'Reply with exactly \{"nonce": "([0-9a-f]+)"')


def prompt(body) -> str:
    return body["messages"][-1]["content"]


def sentence(body) -> str:
    """The answer as the judge reads it (entities decoded)."""
    return html.unescape(_SENTENCE.search(prompt(body)).group(1))


def nonce(body) -> str:
    """The request's nonce, read from the rubric's reply line (the last match: after the sentence)."""
    return _NONCE.findall(prompt(body))[-1]


def concepts(body) -> list[str]:
    return re.search(r"Concepts: (.*)", prompt(body)).group(1).split(", ")


def verdict(body, score: int, order: list[str]) -> str:
    """An honest judge's reply to this request."""
    return json.dumps({"nonce": nonce(body), "score": score, "order": order})


def reply(content, status: int = 200, trickle: float = 0):
    """The HTTP answer of a ScriptedServer carrying `content` as the assistant's message."""
    body = {
        "model": "judge-model",
        "choices": [
            {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode(), trickle
