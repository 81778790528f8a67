"""The OpenAI-compatible backend against a local HTTP server that misbehaves on purpose."""

import json
import re
import threading
import time
import zlib

import pytest

from ocg.config.model_registry import parse_models
from ocg.core.errors import OcgInputError
from ocg.generation import generate, read_generations
from ocg.generation.backends.openai_backend import ApiError, parse_completion
from tests.generation.scripted_server import KEY, ScriptedServer, ok_body


class FlakyServer(ScriptedServer):
    """Answers chat completions; the first request of some prompts gets 429, 500 or a stall."""

    def __init__(self, mode="flaky"):
        self.mode = mode
        self.log = []  # (time, prompt, status)
        self.seen = {}
        self.lock = threading.Lock()
        super().__init__(self.respond)

    def respond(self, body, headers):
        prompt = body["messages"][-1]["content"]
        status, extra, payload, stall = self.decide(headers, body, prompt)
        if stall:
            time.sleep(stall)
        with self.lock:
            self.log.append((time.time(), prompt, status))
        return (
            status,
            {**extra, "Content-Type": "application/json"},
            json.dumps(payload).encode(),
            0,
        )

    def decide(self, headers, body, prompt):
        if headers.get("Authorization") != f"Bearer {KEY}":
            return 401, {}, {"error": {"message": "Incorrect API key provided"}}, 0
        if self.mode == "missing":
            return 404, {}, {"error": {"message": f"model {body['model']} does not exist"}}, 0
        with self.lock:
            n = self.seen[prompt] = self.seen.get(prompt, 0) + 1
        words = prompt.split("\n")[0].split(": ", 1)[1]
        kind = zlib.crc32(words.encode()) % 4  # which failure this prompt gets on its first try
        if n == 1 and kind == 1:
            return 429, {"Retry-After": "1"}, {"error": {"message": "rate limited"}}, 0
        if n == 1 and kind == 2:
            return 500, {}, {"error": {"message": "internal"}}, 0
        if n == 1 and kind == 3:
            return 200, {}, {}, 1.5  # longer than the client's timeout
        assert body["temperature"] == 0 and body["seed"] == 42 and body["max_tokens"] == 32
        answer = f"A sentence with {words}."
        return (
            200,
            {},
            {
                "model": body["model"],
                "choices": [
                    {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 30, "completion_tokens": 8},
            },
            0,
        )


@pytest.fixture
def server():
    s = FlakyServer()
    yield s
    s.close()


def api_spec(url, **api):
    entry = {
        "id": "local-model",
        "backend": "openai",
        "max_new_tokens": 32,
        "batch_size": 12,
        "api": {
            "base_url": url,
            "key_env": "OCG_TEST_KEY",
            "concurrency": 4,
            "timeout_s": 0.5,
            "backoff_s": 0.05,
            "max_retries": 4,
            **api,
        },
    }
    return parse_models({"models": {"local-api": entry}}, "test")["local-api"]


def test_answers_arrive_despite_429_500_and_timeouts(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    model_dir = generate(
        api_spec(server.url),
        out_dir=tmp_path,
        progress=False,
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
    )
    df = read_generations(model_dir)
    assert len(df) == 24 and df.instance_id.is_unique
    assert all(a.startswith("A sentence with ") for a in df.answer)
    assert (df.answer == df.concepts.map(lambda c: f"A sentence with {' '.join(c)}.")).all()
    statuses = [s for _, _, s in server.log]
    assert statuses.count(429) > 0 and statuses.count(500) > 0
    assert statuses.count(200) > 24  # the stalled ones were answered too late, then retried
    # Retry-After: 1 was honoured (the backoff alone would retry after 0.05 s)
    for t, prompt, status in server.log:
        if status == 429:
            retry = min(t2 for t2, p2, s2 in server.log if p2 == prompt and t2 > t)
            assert retry - t >= 0.9
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["backend"]["retried_requests"] >= statuses.count(429) + statuses.count(500)
    assert card["backend"]["key_env"] == "OCG_TEST_KEY"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_bad_key_is_a_clear_error(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", "sk-wrong")
    with pytest.raises(ApiError, match=r"401 from .*: the key in \$OCG_TEST_KEY was refused"):
        generate(
            api_spec(server.url),
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
        )


def test_unknown_model_is_a_clear_error(tmp_path, monkeypatch):
    server = FlakyServer(mode="missing")
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    try:
        with pytest.raises(ApiError, match=r"404 from .*unknown endpoint or model 'local-model'"):
            generate(
                api_spec(server.url),
                out_dir=tmp_path,
                progress=False,
                conditions=["ordered"],
                subset_k=1,
                template_ids=[0],
            )
    finally:
        server.close()


def test_missing_key_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("OCG_TEST_KEY", raising=False)
    with pytest.raises(OcgInputError, match="environment variable OCG_TEST_KEY is not set"):
        generate(
            api_spec("http://127.0.0.1:9/v1"),
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
        )


def test_gives_up_after_max_retries(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    spec = api_spec("http://127.0.0.1:9/v1", max_retries=2, timeout_s=0.2)  # nothing listens
    with pytest.raises(ApiError, match="gave up after 3 attempts"):
        generate(
            spec,
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
        )


def rejects_system(body, headers):
    if any(m["role"] == "system" for m in body["messages"]):
        return (
            400,
            {"Content-Type": "application/json"},
            json.dumps(
                {
                    "error": {
                        "message": "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
                        "type": "invalid_request_error",
                    }
                }
            ).encode(),
            0,
        )
    return 200, {"Content-Type": "application/json"}, ok_body(), 0


def test_o1_style_api_that_rejects_the_system_role(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    server = ScriptedServer(rejects_system)
    try:
        with pytest.raises(
            ApiError,
            match=r"400 .* rejects the system role .*set `system_mode: folded` "
            r"in its entry \(models.local-api\)",
        ):
            generate(
                api_spec(server.url),
                out_dir=tmp_path / "a",
                progress=False,
                conditions=["ordered"],
                subset_k=1,
                template_ids=[0],
            )
        spec = parse_models(
            {
                "models": {
                    "local-api": {
                        "id": "o1-like",
                        "backend": "openai",
                        "system_mode": "folded",
                        "max_new_tokens": 32,
                        "api": {
                            "base_url": server.url,
                            "key_env": "OCG_TEST_KEY",
                            "temperature": None,
                            "token_param": "max_completion_tokens",
                        },
                    }
                }
            },
            "test",
        )["local-api"]
        model_dir = generate(
            spec,
            out_dir=tmp_path / "b",
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
        )
    finally:
        server.close()
    df = read_generations(model_dir)
    assert len(df) == 24 and set(df.system_mode) == {"folded"}
    sent = server.bodies[-1]
    assert [m["role"] for m in sent["messages"]] == ["user"] and "temperature" not in sent
    assert sent["messages"][0]["content"].startswith(
        "You are a helpful assistant. Please generate only an answer.\n\n"
    )
    assert sent["max_completion_tokens"] == 32
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["settings"]["system_mode"] == "folded" and card["backend"][
        "models_reported_by_server"
    ] == ["served-model"]


@pytest.mark.parametrize("bad_key", [KEY + "\n", "sk-a\rb" + KEY, KEY + " trailing"])
def test_a_key_with_control_characters_never_leaks(tmp_path, monkeypatch, bad_key):
    monkeypatch.setenv("OCG_TEST_KEY", bad_key)
    with pytest.raises(OcgInputError) as info:
        generate(
            api_spec("http://127.0.0.1:9/v1"),
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
        )
    assert "OCG_TEST_KEY" in str(info.value) and KEY not in str(info.value)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace")


def test_a_trickling_server_cannot_hold_a_request(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    server = ScriptedServer(
        lambda body, headers: (200, {"Content-Type": "application/json"}, ok_body() * 3, 0.2)
    )
    t0 = time.time()
    try:
        with pytest.raises(
            ApiError,
            match=r"gave up after 2 attempts \(last: no complete answer within timeout_s=1 s\)",
        ):
            generate(
                api_spec(server.url, timeout_s=1, max_retries=1, concurrency=1),
                out_dir=tmp_path,
                progress=False,
                conditions=["ordered"],
                subset_k=1,
                template_ids=[0],
            )
    finally:
        server.close()
    assert time.time() - t0 < 15  # two bounded attempts (a per-read timeout would wait minutes)


def test_retry_after_waits_are_capped(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    server = ScriptedServer(
        lambda body, headers: (429, {"Retry-After": "120"}, b'{"error": "slow down"}', 0)
    )
    t0 = time.time()
    try:
        with pytest.raises(
            ApiError, match=r"asks to wait 120 s more .* api.max_retry_wait_s=5 allows"
        ):
            generate(
                api_spec(server.url, max_retry_wait_s=5),
                out_dir=tmp_path,
                progress=False,
                conditions=["ordered"],
                subset_k=1,
                template_ids=[0],
            )
    finally:
        server.close()
    assert time.time() - t0 < 10


@pytest.mark.parametrize(
    "content_type, body, what",
    [
        ("text/html", "<html><body>Bad gateway</body></html>", "body is not JSON (text/html)"),
        ("application/json", "{not json", "body is not JSON"),
        ("application/json", '{"id": "x"}', "no choices"),
        ("application/json", '{"choices": []}', "no choices"),
        (
            "application/json",
            '{"choices": [{"message": {"content": [{"type": "text", "text": "a"}]}}]}',
            "message content is a list",
        ),
    ],
)
def test_malformed_answers_are_clear_errors(content_type, body, what):
    with pytest.raises(ApiError, match=rf"HTTP 200.*{re.escape(what)}.*{re.escape(body[:8])}"):
        parse_completion(200, content_type, body)


def test_streamed_answers_are_read_too():
    chunks = [
        {"model": "m", "choices": [{"delta": {"role": "assistant", "content": "A dog"}}]},
        {"model": "m", "choices": [{"delta": {"content": " runs."}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    out = parse_completion(200, "text/event-stream", body)
    assert (
        out["raw"] == "A dog runs."
        and out["finish_reason"] == "stop"
        and out["response_model"] == "m"
    )


def test_a_malformed_answer_through_the_backend_names_status_and_excerpt(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    server = ScriptedServer(
        lambda body, headers: (200, {"Content-Type": "text/html"}, b"<html>proxy login</html>", 0)
    )
    try:
        with pytest.raises(
            ApiError, match=r"HTTP 200 but the body is not JSON \(text/html\): '<html>proxy login"
        ):
            generate(
                api_spec(server.url),
                out_dir=tmp_path,
                progress=False,
                conditions=["ordered"],
                subset_k=1,
                template_ids=[0],
            )
    finally:
        server.close()
    card = json.loads((tmp_path / "local-api" / "run_card.json").read_text())
    assert card["status"] == "failed" and "not JSON" in card["runs"][-1]["error"]


@pytest.mark.parametrize("takes_seed", [True, False])
def test_sampled_api_requests_carry_each_samples_seed_temperature_and_top_p(
    tmp_path, monkeypatch, takes_seed
):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    bodies = []

    def record(body, headers):
        bodies.append(body)
        return 200, {"Content-Type": "application/json"}, ok_body(f"seed {body.get('seed')}"), 0

    server = ScriptedServer(record)
    try:
        model_dir = generate(
            api_spec(server.url, takes_seed=takes_seed),
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
            samples=2,
            sampling={"temperature": 0.9, "top_p": 0.8},
        )
    finally:
        server.close()
    df = read_generations(model_dir)
    assert len(df) == 48 and sorted(df["sample"].unique()) == [0, 1]
    assert all(b["temperature"] == 0.9 and b["top_p"] == 0.8 for b in bodies)
    if takes_seed:
        assert (df.answer == "seed " + (42 + df["sample"]).astype(str)).all()
    else:
        assert not any("seed" in b for b in bodies)
    card = json.loads((model_dir / "run_card.json").read_text())
    assert (
        card["sampling"]["seeds"] == [42, 43] and card["sampling"]["seeds_honoured"] is takes_seed
    )


@pytest.mark.parametrize("regex_param", [None, "guided_regex"])
def test_a_constrained_condition_sends_each_instances_regex(tmp_path, monkeypatch, regex_param):
    """vLLM's structured outputs (`structured_outputs: {regex}`) or its older `guided_regex`: each
    request of `ordered_constrained` carries its instance's grammar; `ordered` requests none."""
    from ocg.generation.ordered_grammar import ordered_regex

    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    bodies = []

    def record(body, headers):
        bodies.append(body)
        words = (
            body["messages"][-1]["content"].split("\n")[0].split(": ", 1)[1]
        )  # template 0's concepts
        return (
            200,
            {"Content-Type": "application/json"},
            ok_body(words.capitalize() + "."),
            0,
        )  # in every grammar

    server = ScriptedServer(record)
    try:
        model_dir = generate(
            api_spec(server.url, **({"regex_param": regex_param} if regex_param else {})),
            out_dir=tmp_path,
            progress=False,
            conditions=["ordered", "ordered_constrained"],
            subset_k=1,
            template_ids=[0],
        )
    finally:
        server.close()
    df = read_generations(model_dir)
    forced = df[df.condition == "ordered_constrained"]
    assert (
        len(forced) == 24
        and (
            forced.grammar
            == [ordered_regex(c, p) for c, p in zip(forced.concepts, forced.pos_pattern)]
        ).all()
    )
    sent = {}
    for b in bodies:
        regex = (
            b.get("guided_regex") if regex_param else b.get("structured_outputs", {}).get("regex")
        )
        assert ("structured_outputs" in b) is (regex_param is None and regex is not None)
        sent.setdefault(b["messages"][-1]["content"], []).append(regex)
    for r in (
        df.itertuples()
    ):  # the same prompt in both conditions: one request without, one with its regex
        prompt = (
            r.prompt[-1]["content"]
            if isinstance(r.prompt, list)
            else json.loads(r.prompt)[-1]["content"]
        )
        assert sorted(sent[prompt], key=str) == sorted(
            [
                None,
                forced.set_index("instance_id").grammar[
                    r.instance_id.replace("ordered-", "ordered_constrained-", 1)
                    if r.condition == "ordered"
                    else r.instance_id
                ],
            ],
            key=str,
        )
