"""Ask the LLM judge (metrics/judge.py) about each answer once.

The judge is an entry of the models file, named by the run file's `scoring: {judge: NAME}`:
`backend: transformers` (a causal LM run in process, batched, its decoding constrained by xgrammar
to the verdict, `judge.verdict_regex`: the embedded default judges offline), `backend: openai`
(any OpenAI-compatible server: vLLM, `transformers serve`, a hosted API, asked with the verdict's
JSON Schema as `response_format` and asked again without it where the server refuses that field;
the entry's `api.server` is started for the scoring and stopped after, as for generation, its log
`judge_server.log` beside the scores) or `backend: replay` (a judge's replies replayed offline from
its `replay.file`: one line per answer, its `instance_id` the answer's key as judge_cache.parquet's
`text` column holds it, `json.dumps([answer, concepts])`, its `answer` the judge's reply).
Each (answer, concepts) is asked once, with its nonce (metrics/judge.py: an HMAC under the secret
kept beside the cache, judge_secret, made on first use), and its reply cached in
judge_cache.parquet under the judge's key (its id, base URL, the rubric's hash, the decoding and
the constraint) with a digest sealing the entry, written after every chunk of requests, so a
rescoring or a crash resumes without asking again; an entry whose digest does not match (edited
by hand, or a lost secret) is asked again, and the scoring's line says how many. A request that fails
(a 4xx, a timeout) leaves its answer unjudged with the reason, "error: ...", and uncached: the
other families are written, and a later scoring asks only what is missing; a judge that answers
none of the requests makes the family missing with the first error, and scoring ends with that
error after the score set is written. Without a judge, the family is missing with the reason,
never 0.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pandas as pd

from ..core.errors import OcgFault, OcgInputError
from ..core.layout import ModelScores
from ..metrics import judge
from .neural import TextCache

CHUNK = 64  # requests between two writes of the cache
NO_JUDGE = (
    "no judge in the run file (scoring: {judge: NAME}, a transformers, openai or replay entry "
    "of the models file)"
)
BACKENDS = ("transformers", "openai", "replay")
COLUMNS = ("judge_score", "judge_in_order", "judge_order", "judge_reason")
STRUCTURED = (
    "json_schema"  # how an openai judge is asked: response_format with the verdict's schema
)
CONSTRAINT = "verdict_regex: score 1-5, order distinct concepts of the set"  # in-process judge
SHOWN_ERRORS = 3  # distinct request errors kept in the signature
EXAMPLES, EXAMPLE_CHARS = 5, 300  # unjudged answers kept in the signature, each field cut to this
LOAD_FAILED = "judge could not load"  # every wanted answer's error where the judge did not load
ASK_FAILED = "judge failed"  # a chunk's error where the in-process judge raised while decoding
ERROR_CHARS = 300  # an exception shown as an error: its type and first line, cut to this


class JudgeFailed(OcgFault):
    """The judge answered none of the requests: its family is missing, the rest was written."""


def judge_spec(name: str | None, models_file: str | None = None):
    """The models file's entry for the judge (transformers, openai or replay backend), or None
    without one: the run's own models file where it names one (scoring.judge_models_file), else
    the default."""
    if name is None:
        return None
    from ..config.model_registry import MODELS_FILE, load_models

    path = models_file or MODELS_FILE
    models = load_models(path)
    if name not in models:
        raise OcgInputError("scoring.judge", f"unknown model {name!r}; expected an entry of {path}")
    spec = models[name]
    if spec.backend not in BACKENDS:
        raise OcgInputError(
            "scoring.judge",
            f"{name!r} has backend {spec.backend}; expected transformers (run in process), "
            "openai (asked through an OpenAI-compatible server) or replay",
        )
    if spec.backend == "replay" and not spec.replay.file:
        raise OcgInputError(
            "scoring.judge",
            f"{name!r} is a replay entry without replay.file; expected the "
            "file of the judge's replies (a replay judge writes none)",
        )
    return spec


def check_loadable(name: str | None, models_file: str | None = None):
    """judge_spec, and the judge's local model folder checked as a generation model's is
    (transformers_loading.check_local_model: there, config.json, weights), before any work: one
    error naming the entry, its models file and the folder. A truncated weights file passes: its
    loading fails at scoring, which costs only the judge's verdicts (_asker)."""
    spec = judge_spec(name, models_file)
    if spec is None:
        return None
    from ..config.model_registry import MODELS_FILE
    from ..generation.backends.transformers_loading import check_local_model

    try:
        check_local_model(spec)
    except OcgInputError as exc:
        raise OcgInputError(
            "scoring.judge", f"{name!r}: {exc.where} of {models_file or MODELS_FILE}: {exc.problem}"
        ) from None
    return spec


def settings(name: str | None, models_file: str | None = None) -> dict:
    """The judge's key: who is asked, with which rubric, decoding and constraint."""
    spec = judge_spec(name, models_file)
    if spec is None:
        return {"judge": None}
    if spec.backend == "replay":
        from ..generation.backends.replay_backend import read_answers, replay_file

        path = replay_file(spec)
        read_answers(path, f"models.{name}.replay.file")  # type: ignore[arg-type]  # checked before anything is scored; a replay entry names its file
        return {
            "judge": name,
            "backend": "replay",
            "id": spec.id,
            "prompt_sha256": judge.prompt_sha256(),
            "replay_file_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),  # type: ignore[union-attr]  # a replay entry names its file
        }
    if spec.backend == "transformers":
        from ..generation.backends.constrained import LIBRARY, library_version

        return {
            "judge": name,
            "backend": "transformers",
            "id": spec.id,
            "revision": spec.revision,
            "prompt_sha256": judge.prompt_sha256(),
            "decoding": {
                "greedy": True,
                "max_new_tokens": spec.max_new_tokens,
                "seed": spec.seed,
                "dtype": spec.dtype,
                "quantization": spec.quantization,
            },
            "constraint": {
                "library": LIBRARY,
                "library_version": library_version(),
                "grammar": CONSTRAINT,
            },
        }
    return {
        "judge": name,
        "id": spec.id,
        "base_url": spec.api.base_url,
        "prompt_sha256": judge.prompt_sha256(),
        "decoding": {
            "temperature": spec.api.temperature,
            "max_new_tokens": spec.max_new_tokens,
            "seed": spec.seed,
        },
        "structured": STRUCTURED,
    }


def _text_key(answer, concepts) -> str:
    return json.dumps(
        [answer if isinstance(answer, str) else "", list(concepts)], ensure_ascii=False
    )


def _not_asked(key: str) -> str | None:
    """Why an answer is not asked: empty, or carrying a verdict-shaped object (metrics/judge.py)."""
    answer = json.loads(key)[0]
    if not answer.strip():
        return judge.EMPTY_ANSWER
    return judge.CARRIES_VERDICT if judge.carries_verdict(answer) else None


SECRET_BYTES = 32
_SECRET_TEXT = re.compile(f"[0-9a-f]{{{2 * SECRET_BYTES}}}")


def secret(path: Path) -> bytes:
    """The judge's secret beside its cache (judge_secret: 64 hex characters, mode 0600), made on
    first use. Written whole to a temporary file and linked into place, so two scorings agree on
    one; never followed through a symbolic link. It keys every nonce and cache digest and goes
    nowhere else: not into a signature, a table or a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() and not path.is_symlink():
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(SECRET_BYTES) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another scoring made it first: its secret is the one
        finally:
            temporary.unlink()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise OcgInputError(
            str(path), f"cannot read the judge's secret ({exc.strerror}); expected a file ocg made"
        ) from None
    with os.fdopen(fd) as handle:
        text = handle.read(4 * SECRET_BYTES).strip()
    if not _SECRET_TEXT.fullmatch(text):
        raise OcgInputError(
            str(path),
            f"expected {2 * SECRET_BYTES} hex characters (the judge's secret, made by ocg); "
            "remove the file to make a new one (every cached verdict is then asked again)",
        )
    return bytes.fromhex(text)


def _sealed(cache: TextCache, key_secret: bytes) -> tuple[dict[str, str], int]:
    """The cached replies whose digest matches (text -> reply), and how many did not: those are
    dropped from the cache and asked again."""
    table = cache.table
    if "digest" not in table:
        table = table.assign(digest=None)
    good = [
        isinstance(d, str)
        and hmac.compare_digest(d, judge.entry_digest(key_secret, cache.key, t, r))
        for t, r, d in zip(table["text"], table["reply"], table["digest"])
    ]
    cache.table = table.loc[pd.Series(good, index=table.index, dtype=bool)].reset_index(drop=True)
    return dict(zip(cache.table["text"], cache.table["reply"])), len(good) - sum(good)


def verdicts(
    answers: pd.DataFrame,
    name: str | None,
    key: dict,
    cache_path: Path,
    redo: bool,
    log,
    models_file: str | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Per answer: judge_score (1-5), judge_order (the concepts as the judge read them),
    judge_in_order (1/0), NaN and None where unjudged, and judge_reason: None where judged, else
    why not (metrics/judge.py REASONS; "error: ..." for a failed request)."""
    sig = {
        "judge": name,
        "prompt_sha256": judge.prompt_sha256(),
        "rubric": "metrics/judge.py RUBRIC",
        "asked": "each distinct (answer, concepts) once; an empty answer, or one that carries "
        "a verdict-shaped object under any spelling, is not asked",
        "judged": "a reply that is exactly the verdict object: the request's nonce, score an "
        "integer 1-5, order distinct concepts of the set, no key twice, no verdict the answer "
        "itself wrote",
        "nonce": f"HMAC-SHA256 of the answer and its concepts under the secret beside the cache, "
        f"{judge.NONCE_CHARS} hex characters; a replay judge's recorded replies are not checked",
    }
    if name is None:
        empty = pd.DataFrame(
            {"judge_score": math.nan, "judge_in_order": math.nan}, index=answers.index
        )
        return empty.assign(
            judge_order=[None] * len(answers), judge_reason=[None] * len(answers)
        ), dict(sig, status="missing", reason=NO_JUDGE, retry=False)
    spec = judge_spec(name, models_file)
    key_secret = secret(ModelScores(cache_path.parent).judge_secret)
    cache = TextCache(cache_path, key, ["text", "reply", "digest"], redo)
    known, rejected = _sealed(cache, key_secret)
    if rejected:
        sig["cache_rejected"] = rejected  # type: ignore[assignment]  # sig holds strings and counts alike
        log(f"judge: {rejected:,} cached replies did not match their digest: asked again")
    keys = [_text_key(a, c) for a, c in zip(answers["answer"], answers["concepts"])]
    why_not = {k: _not_asked(k) for k in dict.fromkeys(keys)}
    nonces = {k: judge.nonce(key_secret, k) for k, why in why_not.items() if why is None}
    wanted = [k for k in nonces if k not in known]
    errors: dict[str, str] = {}
    if wanted:
        requests = [(k, nonces[k]) for k in wanted]
        with _asker(spec, requests, cache_path.parent, sig) as ask:
            log(f"judge: {len(wanted):,} distinct answers asked of {name}")
            for s in range(0, len(wanted), CHUNK):
                chunk = wanted[s : s + CHUNK]
                answered = []
                for k, (reply, error) in zip(chunk, ask(requests[s : s + CHUNK])):
                    if error is None:
                        answered.append((k, reply))
                    else:
                        errors[k] = error
                if answered:  # what failed is not cached: a later scoring asks it again
                    sealed = [
                        (k, r, judge.entry_digest(key_secret, cache.key, k, r))  # type: ignore[arg-type]  # a reply without an error is a string
                        for k, r in answered
                    ]
                    cache.add(pd.DataFrame(sealed, columns=["text", "reply", "digest"]))
                    known.update(answered)  # type: ignore[arg-type]  # a reply without an error is a string
    checked = None if spec.backend == "replay" else nonces  # a record answers no request
    read = [
        (math.nan, None, why_not[k])
        if why_not[k]
        else (math.nan, None, f"{judge.ERROR}: {errors[k]}")
        if k in errors
        else judge.read(known.get(k), c, json.loads(k)[0], checked and checked[k])  # type: ignore[arg-type]  # a key read here has a nonce, so this is one or None
        for k, c in zip(keys, answers["concepts"])
    ]
    out = pd.DataFrame(
        {
            "judge_score": [r[0] for r in read],
            "judge_in_order": [
                judge.judged_in_order(r[1], c) for r, c in zip(read, answers["concepts"])
            ],
            "judge_order": [r[1] for r in read],
            "judge_reason": [r[2] for r in read],
        },
        index=answers.index,
    )
    counts = Counter(judge.reason_kind(r[2]) for r in read if r[2])
    block = dict(
        sig,
        status="ok",
        n_judged=int(sum(r[2] is None for r in read)),
        unjudged={r: counts[r] for r in judge.REASONS if counts[r]},
        unjudged_examples=_examples(keys, read, known),
    )
    if errors:  # asked again by the next scoring (scoring/run.py: stale_metrics)
        shown = list(dict.fromkeys(errors.values()))[:SHOWN_ERRORS]
        block.update(retry=True, n_errors=len(errors), errors=shown)  # type: ignore[arg-type]  # sig holds strings, counts and lists alike
        log(f"judge: {len(errors):,} requests failed, their answers unjudged (first: {shown[0]})")
        if len(errors) == len(wanted) and not any(k in known for k in why_not):
            block.update(
                status="missing",
                reason=f"the judge {name} answered none of the {len(wanted):,} requests "
                f"(first error: {shown[0]})",
            )
    return out, block


def _examples(keys: list[str], read: list, known: dict) -> list[dict]:
    """A few unjudged answers with the judge's reply and the reason, one per reason first (what a
    researcher reads to fix a judge prompt); empty answers left out."""
    seen: dict[str, dict] = {}
    for k, (_, _, why) in zip(keys, read):
        if why is None or why == judge.EMPTY_ANSWER or k in seen:
            continue
        reply = known.get(k)
        seen[k] = {
            "answer": json.loads(k)[0][:EXAMPLE_CHARS],
            "reply": None if reply is None else reply[:EXAMPLE_CHARS],
            "reason": why[:EXAMPLE_CHARS],
        }
    first = {}  # type: ignore[var-annotated]  # dict[str, dict]; hashed file: no annotation
    for example in seen.values():
        first.setdefault(judge.reason_kind(example["reason"]), example)
    rest = [e for e in seen.values() if e not in first.values()]
    return (list(first.values()) + rest)[:EXAMPLES]


def failure(block: dict) -> JudgeFailed | None:
    """The error scoring ends with, after writing, where the judge answered no request."""
    if block.get("status") == "missing" and block.get("n_errors"):
        return JudgeFailed(f"{block['reason']}; every other family was written")
    return None


Request = tuple[str, str]  # (the answer's key, json.dumps([answer, concepts]); its nonce)
Ask = Callable[[list[Request]], list[tuple[str | None, str | None]]]


@contextmanager
def _asker(spec, requests: list[Request], out: Path, sig: dict) -> Iterator[Ask]:
    """ask(requests) -> per request (the judge's reply, None) or (None, why the request failed): read from a
    replay judge's file (every wanted answer checked there first), decoded in process (a
    transformers judge), or asked of the OpenAI-compatible server, the entry's `api.server` started
    first where it names one and stopped after (its log: judge_server.log). A judge that cannot
    load (any exception while its weights load or its server starts) fails every request with
    "judge could not load: <type: first line>" (_not_loaded)."""
    if spec.backend == "replay":
        from ..generation.backends.replay_backend import ReplayBackend

        replay = ReplayBackend(spec, CHUNK)
        wanted = [k for k, _ in requests]
        missing = [k for k in wanted if (k, 0) not in replay.answers]
        if missing:
            raise OcgInputError(
                str(replay.path),
                f"no judge reply for {len(missing)} of the {len(wanted)} "
                f"answers to judge (first: {missing[0]}); expected a line per answer, its "
                "instance_id json.dumps([answer, concepts])",
            )
        sig["replayed_from"] = {"file": str(replay.path), "sha256": replay.file_sha256}
        yield lambda requests: [(replay.answers[(k, 0)], None) for k, _ in requests]
        return
    with ExitStack() as stack:
        try:  # loading: the weights (in process) or the server; a failure costs only the verdicts
            ask = (
                _in_process(spec, sig, requests)
                if spec.backend == "transformers"
                else stack.enter_context(_served(spec, out, sig))
            )
        except Exception as exc:  # any: a truncated safetensors, a server that exits, CUDA
            ask = _not_loaded(f"{LOAD_FAILED}: {_one_line(exc)}", sig)
        yield ask


def _one_line(exc: BaseException) -> str:
    """An exception as one line of an error reason: its type and its message's first line."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:ERROR_CHARS]


def _not_loaded(why: str, sig: dict) -> Ask:
    """The asker of a judge that did not load: every request fails with `why` (not cached, asked
    again by the next scoring), so the family is missing with it (verdicts) and scoring ends with
    JudgeFailed after every other family is written."""
    sig["load_error"] = why

    def ask(requests: list[Request]) -> list[tuple[str | None, str | None]]:
        return [(None, why)] * len(requests)

    return ask


def _in_process(spec, sig: dict, requests: list[Request]) -> Ask:
    """A transformers judge: rendered with the model's chat template, batched, each row's decoding
    constrained to its concept set's verdict (constrained.py, one grammar per row). The weights
    load here (a failure: _asker's); a chunk whose decoding raises is unjudged with the error."""
    from ..generation.backends.transformers_backend import TransformersBackend

    grammars = {k: judge.verdict_regex(json.loads(k)[1], n) for k, n in requests}
    backend = TransformersBackend(spec, grammars=grammars)
    backend._load_model()  # here, not on the first batch: a failure is the judge's loading
    sig["decoded"] = {"backend": "transformers", "constraint": CONSTRAINT}

    def ask(requests: list[Request]) -> list[tuple[str | None, str | None]]:
        keys = [k for k, _ in requests]
        items = [(*json.loads(k), n) for k, n in requests]
        try:
            outputs = backend.generate(
                [backend.render(judge.messages(a, c, n)) for a, c, n in items], instance_ids=keys
            )
        except Exception as exc:  # the chunk's answers unjudged with the error, asked again later
            return [(None, f"{ASK_FAILED}: {_one_line(exc)}")] * len(keys)
        sig["decoded"].update(
            device=str(backend.model.device),  # type: ignore[union-attr]  # the model is loaded above (_load_model)
            dtype=str(backend.model.dtype).replace("torch.", ""),  # type: ignore[union-attr]  # the model is loaded above (_load_model)
            resolved_revision=backend.resolved_revision(),
            batch_size=backend.batch_size,
        )
        return [(o["raw"], None) for o in outputs]

    return ask


def _refuses_format(error: OcgFault) -> bool:
    """A 4xx whose body names response_format: a server that does not take structured outputs."""
    return bool(re.match(r"4\d\d from ", str(error))) and "response_format" in str(error)


@contextmanager
def _served(spec, out: Path, sig: dict) -> Iterator[Ask]:
    """An openai judge: each answer asked with the verdict's schema as `response_format`; where the
    server refuses that field, asked again without it from then on (the signature says which)."""
    from ..generation.backends.openai_backend import OpenAIBackend
    from ..generation.servers.server import server_for_run

    backend = OpenAIBackend(spec, CHUNK)
    structured = {"on": True}
    sig["structured_outputs"] = STRUCTURED
    lock = threading.Lock()

    def one(request: Request) -> tuple[str | None, str | None]:
        key, request_nonce = request
        answer, concepts = json.loads(key)
        messages = judge.messages(answer, concepts, request_nonce)
        schema = {
            "name": "verdict",
            "schema": judge.verdict_schema(concepts, request_nonce),
            "strict": True,
        }
        fmt = {"response_format": {"type": "json_schema", "json_schema": schema}}
        sent = structured["on"]
        try:
            try:
                return backend._request(messages, extra=fmt if sent else None)["raw"], None
            except OcgFault as exc:
                if not (sent and _refuses_format(exc)):
                    raise
                with lock:
                    if structured["on"]:
                        structured["on"] = False
                        sig["structured_outputs"] = (
                            f"none: the server refused response_format ({str(exc)[:200]})"
                        )
                return backend._request(messages)["raw"], None
        except OcgFault as exc:
            return None, str(exc)

    with server_for_run(spec, backend, ModelScores(out).judge_server_log) as server:
        if server is not None:
            sig["server"] = {k: server[k] for k in ("command", "version", "log")}
        with ThreadPoolExecutor(max_workers=max(1, spec.api.concurrency)) as pool:
            yield lambda requests: list(pool.map(one, requests))
    sig["retries"] = backend.retries
