"""OpenAI-compatible chat API backend (GPT, Gemini's compatible endpoint, vLLM, llama.cpp).

Temperature 0 (or omitted where a model rejects it), the entry's seed, bounded concurrency,
retries with exponential backoff that honour Retry-After on 429 and retry 5xx and timeouts.
401/403/404 stop at once with a clear error; so does a 400 that rejects the system role (the
entry's `system_mode: folded` is the fix). `timeout_s` bounds each attempt as a whole in wall-clock
time (connect, headers and body: http_client.py), so a server that trickles bytes cannot hold a
request; the time one request may spend waiting on Retry-After is capped by `max_retry_wait_s`.

The key is read from the environment variable the entry names, checked for characters that
cannot go into an HTTP header, sent in a header and never written anywhere: every error
message is scrubbed of it, and so is every answer (a server that echoes the request's headers;
ocg/generation/backends/openai_answer.py notes it in the record). A key shorter than 16 characters is
scrubbed only as it was sent, `Bearer <key>` (it may be a word answers hold), and refused for a
server ocg starts with {key}, whose log could hold it bare. Credentials in `base_url` are
refused (ocg/config/model_registry.py): they would replace the Bearer key and be written into the run card.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import requests
import urllib3
from tqdm import tqdm

from ...config.models_file import ModelEntry
from ...core.errors import OcgInputError
from ...records import BackendBlock
from ...weights.embedded import served
from ..sampling import sample_seed
from .batch_auto import BatchSize, given_batch
from .chat import MessagePrompts
from .http_client import BodyTooLong, DeadlineExceeded, broken_answer, fetch, session
from .openai_answer import (
    MAX_BODY_BYTES,
    SECRET_MIN_CHARS,
    ApiError,
    decode_body,
    parse_completion,
    scrub,
    scrub_answer,
)
from .openai_status import Retryable, refusal


def check_key(key: str, env: str, where: str) -> str:
    """A key that can go into an HTTP header; the error never shows the key itself."""
    bad = [c for c in key if not c.isprintable() or c.isspace()]
    if bad:
        raise OcgInputError(
            where,
            f"the key in ${env} contains {len(bad)} whitespace or control "
            "character(s) (a copied newline?); fix the variable",
        )
    try:
        key.encode("latin-1")
    except UnicodeEncodeError:
        raise OcgInputError(where, f"the key in ${env} contains non-Latin-1 characters") from None
    return key


class OpenAIBackend(MessagePrompts):
    kind: ClassVar[str] = "openai"
    applies_grammars: ClassVar[bool] = (
        True  # sent as a regex to a server that takes one (vLLM's structured outputs)
    )
    sample = 0  # the sample the current batch draws (its seed: sampling.sample_seed)

    prompts_for = MessagePrompts  # the prompt side, built first (make_prompts)

    def __init__(
        self,
        spec: ModelEntry,
        batch: BatchSize | int | None = None,
        *,
        sampling: dict | None = None,
        grammars: Mapping[str, str] | None = None,
        prompts: MessagePrompts | None = None,
        instances: object = None,
    ):
        """`batch`, `grammars`: as TransformersBackend's; `sampling`: the run's temperature and
        top_p (None: the api block's); `prompts` and `instances` are not needed (its prompt side
        is its own, and it answers prompts, not instances)."""
        self.spec = spec = served(spec)  # embedded:NAME served: its converted folder
        super().__init__(spec)
        self.api = spec.api
        self.sampling = sampling
        self.grammars = dict(grammars or {})  # instance id: the expression its answer is forced to
        given = given_batch(spec, batch)
        self.batch_size, self.batch_size_auto = given.size, given.auto
        env = self.api.key_env
        where = f"models.{spec.name}.api.key_env"
        key = (os.environ.get(env) or "") if env else ""
        if env and not key:
            raise OcgInputError(
                where, f"environment variable {env} is not set (it must hold the API key)"
            )
        self._key = check_key(key, env, where) if env else ""
        if (
            self._key
            and self.api.server is not None
            and "{key}" in self.api.server.command
            and len(key) < SECRET_MIN_CHARS
        ):
            raise OcgInputError(
                where,
                f"the key in ${env} has {len(key)} character(s); a server started with "
                f"{{key}} needs one of at least {SECRET_MIN_CHARS}, which its log and answers "
                "cannot hold as an ordinary word (docs/METHODS.md)",
            )
        self.url = self.api.base_url.rstrip("/") + "/chat/completions"
        self.retries = 0  # total retried requests, for the run card
        self.retry_wait_s = 0.0  # total time spent waiting before retries
        self.server_models: set[str] = set()
        self.notes: dict[
            str, int
        ] = {}  # api_notes of the answers (values not stored as sent), counted
        self._notes_lock = threading.Lock()
        self.server: dict | None = None  # the inference server started for this run, if any
        self._session = session()  # each request bounded by timeout_s as a whole (http_client.py)

    @property
    def key(self) -> str:
        """The key, for the server started for this run (server.py's {key}); never to be written."""
        return self._key

    def resolved_revision(self) -> str | None:
        return None

    def _body(
        self, messages: list[dict], regex: str | None = None, extra: dict | None = None
    ) -> dict:
        """The request's body; `extra`: fields added as they are (the judge's response_format)."""
        body = {
            "model": self.spec.id,
            "messages": messages,
            "seed": sample_seed(self.spec.seed, self.sample),
            self.api.token_param: self.spec.max_new_tokens,
            "stream": False,
        }
        if not self.api.takes_seed:  # the API rejects a seed: the card says seeds were not honoured
            del body["seed"]
        if self.sampling:
            body.update(self.sampling)
        elif self.api.temperature is not None:
            body["temperature"] = self.api.temperature
        if regex is not None:
            param = self.api.regex_param
            body.update(
                {"structured_outputs": {"regex": regex}}
                if param == "structured_outputs"
                else {param: regex}
            )
        return {**body, **(extra or {})}

    def _attempt(
        self, messages: list[dict], regex: str | None = None, extra: dict | None = None
    ) -> dict:
        """One request, bounded by timeout_s as a whole; raises Retryable or ApiError."""
        t0 = time.perf_counter()
        resp, body, decoding = self._post(self._body(messages, regex, extra))
        if resp.status_code != 200:
            raise refusal(resp, body, self.url, self._key, self.spec)
        out = self._answer(resp, body, decoding)
        out["seconds"] = round(time.perf_counter() - t0, 4)
        return out

    def _post(self, body: dict) -> tuple:
        """The response, its decoded body and the decoding's notes; a failure to get them raised
        as Retryable (timeouts, dropped connections) or ApiError (the rest, without the key)."""
        limit = float(self.api.timeout_s)
        decoding: list[str] = []
        try:
            resp, raw = fetch(
                self._session,
                "POST",
                self.url,
                limit,
                MAX_BODY_BYTES,
                json=body,
                headers={"Authorization": f"Bearer {self._key}"} if self._key else {},
            )
            return resp, decode_body(resp.status_code, resp.headers, raw, decoding), decoding
        except DeadlineExceeded:
            raise Retryable(f"no complete answer within timeout_s={limit:g} s") from None
        except BodyTooLong as exc:
            raise ApiError(f"{self.url}: {exc}") from None
        except (requests.RequestException, OSError, urllib3.exceptions.HTTPError) as exc:
            raise self._transport_error(exc) from None
        except ApiError as exc:  # a body that cannot be decoded
            raise ApiError(scrub(f"{self.url}: {exc}", self._key)) from None

    def _transport_error(self, exc: Exception) -> Exception:
        if broken := broken_answer(exc):  # a redirect loop, headers past http.client's limits
            return ApiError(scrub(f"{self.url}: {broken}", self._key))
        if isinstance(exc, (requests.Timeout, requests.ConnectionError)) or not isinstance(
            exc, requests.RequestException
        ):
            return Retryable(type(exc).__name__)  # refused, dropped, broken mid-body
        return ApiError(scrub(f"{type(exc).__name__}: {exc}", self._key))  # stop, without the key

    def _answer(self, resp, body: str, decoding: list[str]) -> dict:
        """A 200's answer, scrubbed of the key, its notes counted (and said once per run)."""
        try:
            out = parse_completion(200, resp.headers.get("Content-Type", ""), body, self._key)
            out["api_notes"] = decoding + out["api_notes"]
        except ApiError as exc:
            raise ApiError(scrub(f"{self.url}: {exc}", self._key)) from None
        out = scrub_answer(out, self._key)
        with self._notes_lock:  # requests run in threads
            for note in out["api_notes"]:
                if note not in self.notes:  # said once per run; each record and the card keep it
                    tqdm.write(f"[{self.spec.name}] warning: {note} (the record's api_notes)")
                self.notes[note] = self.notes.get(note, 0) + 1
        return out

    def _request(
        self, messages: list[dict], regex: str | None = None, extra: dict | None = None
    ) -> dict:
        delay = float(self.api.backoff_s)
        cap = float(self.api.max_retry_wait_s)
        waited, last = 0.0, "no attempt"
        for attempt in range(self.api.max_retries + 1):
            try:
                return self._attempt(messages, regex, extra)
            except Retryable as exc:
                last, wait = str(exc), (exc.wait if exc.wait is not None else delay)
            if attempt == self.api.max_retries:
                break
            if waited + wait > cap:
                raise ApiError(
                    f"{self.url}: the server asks to wait {wait:g} s more after {waited:g} s "
                    f"of waits ({last}); more than api.max_retry_wait_s={cap:g} allows"
                )
            if wait >= 5:
                tqdm.write(
                    f"[{self.spec.name}] {last}: waiting {wait:g} s before retrying "
                    f"({waited + wait:g} of at most {cap:g} s for this request)"
                )
            self.retries += 1
            self.retry_wait_s += wait
            time.sleep(wait)
            waited += wait
            delay *= 2
        raise ApiError(
            f"{self.url}: gave up after {self.api.max_retries + 1} attempts (last: {last})"
        )

    def attach_server(self, info: dict) -> None:
        """Ask the server started for this run (`info` from server.running_server) from now on,
        after one request alone: some servers load the model on the first request, and race on
        concurrent ones. An ApiError says the server does not answer that request."""
        self.url, self.server = info["base_url"] + "/chat/completions", info
        self._request([{"role": "user", "content": "Say OK."}])

    def generate(
        self, rendered: list[list[dict]], instance_ids: list[str] | None = None, sample: int = 0
    ) -> list[dict]:
        self.sample = sample
        with ThreadPoolExecutor(max_workers=min(self.api.concurrency, len(rendered))) as pool:
            regexes = (
                [self.grammars.get(i) for i in instance_ids]
                if instance_ids
                else [None] * len(rendered)
            )
            results = list(pool.map(self._request, rendered, regexes))
        for r in results:
            r["batch_size"] = len(rendered)
            if r.get("response_model"):
                self.server_models.add(r["response_model"])
        return results

    def card(self) -> BackendBlock:
        """The run card's `backend`: the API asked, what its server reported, the retries."""
        card = {
            "backend": self.kind,
            "base_url": self.api.base_url,
            "key_env": self.api.key_env,  # the variable's name, never its value
            "temperature": self.api.temperature,
            "concurrency": self.api.concurrency,
            "resolved_revision": None,
            **self.prompt_settings(),
            "models_reported_by_server": sorted(self.server_models),
            "server": self.server,
            "retried_requests": self.retries,
            "retry_wait_s": round(self.retry_wait_s, 2),
            "api_notes": dict(sorted(self.notes.items())),
            "planned_batch_size": self.batch_size,
        }
        return BackendBlock.model_validate(card)
