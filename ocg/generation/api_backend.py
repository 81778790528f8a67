"""OpenAI-compatible chat API backend (GPT, Gemini's compatible endpoint, vLLM, llama.cpp).

Temperature 0 (or omitted where a model rejects it), the entry's seed, bounded concurrency,
retries with exponential backoff that honour Retry-After on 429 and retry 5xx and timeouts.
401/403/404 stop at once with a clear error. The key is read from the environment variable
the entry names; it is sent in a header and never written anywhere.
"""

from __future__ import annotations

import email.utils
import os
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from ..errors import OcgInputError
from ..models import ModelSpec

MAX_RETRY_AFTER_S = 300.0


class ApiError(RuntimeError):
    """A request that retrying cannot fix (bad key, unknown model, other 4xx)."""


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


class OpenAIBackend:
    kind = "openai"

    def __init__(self, spec: ModelSpec, batch_size: int | None = None):
        self.spec = spec
        self.api = spec.api
        self.batch_size = batch_size or spec.batch_size
        env = self.api["key_env"]
        self._key = os.environ.get(env)
        if not self._key:
            raise OcgInputError(f"models.{spec.name}.api.key_env",
                                f"environment variable {env} is not set (it must hold the API key)")
        self.url = self.api["base_url"].rstrip("/") + "/chat/completions"
        self.system_mode = "system"
        self.retries = 0  # total retried requests, for the run card
        self._session = requests.Session()

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def render(self, messages: list[dict]) -> list[dict]:
        return messages

    def prompt_lengths(self, rendered: list[list[dict]]) -> list[int]:
        return [sum(len(m["content"]) for m in msgs) for msgs in rendered]

    def _body(self, messages: list[dict]) -> dict:
        body = {"model": self.spec.id, "messages": messages, "seed": self.spec.seed,
                self.api["token_param"]: self.spec.max_new_tokens}
        if self.api["temperature"] is not None:
            body["temperature"] = self.api["temperature"]
        return body

    def _request(self, messages: list[dict]) -> dict:
        delay = float(self.api["backoff_s"])
        last = "no attempt"
        for attempt in range(self.api["max_retries"] + 1):
            t0 = time.perf_counter()
            wait = None
            try:
                resp = self._session.post(self.url, json=self._body(messages),
                                          headers={"Authorization": f"Bearer {self._key}"},
                                          timeout=self.api["timeout_s"])
            except (requests.Timeout, requests.ConnectionError) as exc:
                last = f"{type(exc).__name__}"
            else:
                if resp.status_code == 200:
                    return self._parse(resp.json(), time.perf_counter() - t0)
                if resp.status_code in (401, 403):
                    raise ApiError(f"{resp.status_code} from {self.url}: the key in "
                                   f"${self.api['key_env']} was refused")
                if resp.status_code == 404:
                    raise ApiError(f"404 from {self.url}: unknown endpoint or model "
                                   f"{self.spec.id!r}: {self._scrub(resp.text[:300])}")
                if resp.status_code == 429 or resp.status_code >= 500:
                    last = f"HTTP {resp.status_code}"
                    if resp.status_code == 429:
                        wait = _retry_after_seconds(resp.headers.get("Retry-After"))
                else:
                    raise ApiError(f"{resp.status_code} from {self.url}: "
                                   f"{self._scrub(resp.text[:300])}")
            if attempt == self.api["max_retries"]:
                break
            self.retries += 1
            time.sleep(min(wait if wait is not None else delay, MAX_RETRY_AFTER_S))
            delay *= 2
        raise ApiError(f"{self.url}: gave up after {self.api['max_retries'] + 1} attempts "
                       f"(last: {last})")

    @staticmethod
    def _parse(payload: dict, seconds: float) -> dict:
        choice = payload["choices"][0]
        usage = payload.get("usage") or {}
        return {
            "raw": (choice.get("message") or {}).get("content") or "",
            "finish_reason": choice.get("finish_reason"),
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "seconds": round(seconds, 4),
            "response_model": payload.get("model"),
            "system_fingerprint": payload.get("system_fingerprint"),
        }

    def generate(self, rendered: list[list[dict]]) -> list[dict]:
        with ThreadPoolExecutor(max_workers=min(self.api["concurrency"], len(rendered))) as pool:
            results = list(pool.map(self._request, rendered))
        for r in results:
            r["batch_size"] = len(rendered)
        return results

    def card(self) -> dict:
        return {
            "backend": self.kind,
            "base_url": self.api["base_url"],
            "key_env": self.api["key_env"],  # the variable's name, never its value
            "temperature": self.api["temperature"],
            "concurrency": self.api["concurrency"],
            "resolved_revision": None,
            "system_mode": self.system_mode,
            "retried_requests": self.retries,
            "planned_batch_size": self.batch_size,
        }
