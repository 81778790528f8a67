"""Ask the LLM judge (metrics/judge.py) about each answer once, through the API backend.

The judge is an entry of the models file with `backend: openai` (any OpenAI-compatible server:
vLLM, `transformers serve`, a hosted API; the entry's `api.server` is started for the scoring and
stopped after, as for generation, its log `judge_server.log` beside the scores) or `backend:
replay` (a judge's replies replayed offline from its `replay.file`: one line per answer, its
`instance_id` the answer's key as judge_cache.parquet's `text` column holds it, `json.dumps([answer,
concepts])`, its `answer` the judge's reply), named by the run file's `scoring: {judge: NAME}`.
Each (answer, concepts) is asked once and cached in judge_cache.parquet under the judge's key
(its id, base URL, the rubric's hash and the decoding), written after every chunk of requests, so
a rescoring or a crash resumes without asking again. Without a judge, the family is missing with
the reason, never 0.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from ..core.errors import OcgInputError
from ..core.layout import ModelScores
from ..metrics import judge
from .neural import TextCache

CHUNK = 64  # requests between two writes of the cache
NO_JUDGE = "no judge in the run file (scoring: {judge: NAME}, an openai or replay entry of the models file)"
BACKENDS = ("openai", "replay")


def judge_spec(name: str | None, models_file: str | None = None):
    """The models file's entry for the judge (openai or replay backend), or None without one: the
    run's own models file where it names one (scoring.judge_models_file), else the default."""
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
            f"{name!r} has backend {spec.backend}; expected openai "
            "(a judge is asked through an OpenAI-compatible server) or replay",
        )
    if spec.backend == "replay" and not spec.replay.file:
        raise OcgInputError(
            "scoring.judge",
            f"{name!r} is a replay entry without replay.file; expected the "
            "file of the judge's replies (a replay judge writes none)",
        )
    return spec


def settings(name: str | None, models_file: str | None = None) -> dict:
    """The judge's key: who is asked, with which rubric and decoding."""
    spec = judge_spec(name, models_file)
    if spec is None:
        return {"judge": None}
    if spec.backend == "replay":
        from ..generation.backends.replay_backend import read_answers, replay_file

        path = replay_file(spec)
        read_answers(path, f"models.{name}.replay.file")  # checked before anything is scored
        return {
            "judge": name,
            "backend": "replay",
            "id": spec.id,
            "prompt_sha256": judge.prompt_sha256(),
            "replay_file_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
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
    }


def _text_key(answer, concepts) -> str:
    return json.dumps(
        [answer if isinstance(answer, str) else "", list(concepts)], ensure_ascii=False
    )


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
    judge_in_order (1/0); NaN and None where unjudged."""
    sig = {
        "judge": name,
        "prompt_sha256": judge.prompt_sha256(),
        "rubric": "metrics/judge.py RUBRIC",
        "asked": "each distinct (answer, concepts) once; an empty answer, or one that carries "
        "a verdict-shaped object, is not asked",
    }
    if name is None:
        empty = pd.DataFrame(
            {"judge_score": math.nan, "judge_in_order": math.nan}, index=answers.index
        )
        return empty.assign(judge_order=[None] * len(answers)), dict(
            sig, status="missing", reason=NO_JUDGE, retry=False
        )
    spec = judge_spec(name, models_file)
    cache = TextCache(cache_path, key, ["text", "reply"], redo)
    known = dict(zip(cache.table["text"], cache.table["reply"]))
    keys = [_text_key(a, c) for a, c in zip(answers["answer"], answers["concepts"])]
    # an empty answer, or one that carries a verdict-shaped object (metrics/judge.py), is not asked
    asked = {k: not judge.carries_verdict(json.loads(k)[0]) for k in dict.fromkeys(keys)}
    wanted = [k for k, ok in asked.items() if ok and k not in known and json.loads(k)[0].strip()]
    if wanted:
        with _asker(spec, wanted, cache_path.parent, sig) as ask:
            log(f"judge: {len(wanted):,} distinct answers asked of {name}")
            for s in range(0, len(wanted), CHUNK):
                chunk = wanted[s : s + CHUNK]
                replies = ask(chunk)
                cache.add(pd.DataFrame({"text": chunk, "reply": replies}))
                known.update(zip(chunk, replies))
    parsed = [
        judge.parse(known.get(k) if asked[k] else None, c, json.loads(k)[0])
        for k, c in zip(keys, answers["concepts"])
    ]
    out = pd.DataFrame(
        {
            "judge_score": [p[0] for p in parsed],
            "judge_in_order": [
                judge.judged_in_order(p[1], c) for p, c in zip(parsed, answers["concepts"])
            ],
            "judge_order": [p[1] for p in parsed],
        },
        index=answers.index,
    )
    carrying = sum(not asked[k] for k in keys)
    unparsed = int(sum(math.isnan(p[0]) for p in parsed)) - carrying
    return out, dict(sig, status="ok", unparsed=unparsed, carries_verdict=carrying)


@contextmanager
def _asker(
    spec, wanted: list[str], out: Path, sig: dict
) -> Iterator[Callable[[list[str]], list[str]]]:
    """ask(keys) -> the judge's replies: read from a replay judge's file (every wanted answer
    checked there first), or asked of the OpenAI-compatible server, the entry's `api.server`
    started first where it names one and stopped after (its log: judge_server.log)."""
    if spec.backend == "replay":
        from ..generation.backends.replay_backend import ReplayBackend

        backend = ReplayBackend(spec, CHUNK)
        missing = [k for k in wanted if (k, 0) not in backend.answers]
        if missing:
            raise OcgInputError(
                str(backend.path),
                f"no judge reply for {len(missing)} of the {len(wanted)} "
                f"answers to judge (first: {missing[0]}); expected a line per answer, its "
                "instance_id json.dumps([answer, concepts])",
            )
        sig["replayed_from"] = {"file": str(backend.path), "sha256": backend.file_sha256}
        yield lambda keys: [backend.answers[(k, 0)] for k in keys]
        return
    from ..generation.backends.openai_backend import OpenAIBackend
    from ..generation.servers.server import server_for_run

    backend = OpenAIBackend(spec, CHUNK)
    with server_for_run(spec, backend, ModelScores(out).judge_server_log) as server:
        if server is not None:
            sig["server"] = {k: server[k] for k in ("command", "version", "log")}
        yield lambda keys: [
            r["raw"] for r in backend.generate([judge.messages(*json.loads(k)) for k in keys])
        ]
    sig["retries"] = backend.retries
