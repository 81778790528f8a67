"""HTTP as servers really speak it, through the real CLI against small local servers on
127.0.0.1 that each test starts and stops: gzip bodies, JSON without a charset, a key-protected
readiness poll, a server that echoes the request's headers, answers with fields of the wrong kind.
Bad input exits 2 with one `ocg: error:` line; a fault exits 1 with one; the key is never written."""

import gzip
import json
import sys
import time
import zlib

import pytest

from ocg.generation import read_generations
from tests.generation.hostile_http import (
    KEY,
    api_entry,
    completion,
    generate,
    nothing_holds_the_key,
    run_cli,
    server_entry,
)
from tests.generation.scripted_server import ScriptedServer

ANSWER = "The dög jumps over the café 😀 – naïve."


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compressed_answer_is_decoded(tmp_path, capsys, monkeypatch, serve, coding):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    pack = gzip.compress if coding == "gzip" else zlib.compress
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json", "Content-Encoding": coding},
            pack(json.dumps(completion("A dog runs.")).encode()),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    df = read_generations(tmp_path / "gen" / "m")
    assert len(df) == 24 and set(df.raw) == {"A dog runs."}


def test_a_broken_gzip_body_is_one_clear_error(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            b"\x1f\x8bnot gzip at all",
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert (
        code == 1
        and err.count("ocg: error: ") == 1
        and "cannot be decoded as Content-Encoding 'gzip'" in err
    ), err


def test_a_gzip_bomb_is_refused_before_it_fills_memory(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    member = gzip.compress(b" " * 2**25, compresslevel=1)  # 32 MiB of blanks in about 100 kB
    bomb = member * 4  # four gzip members: 128 MiB decoded, past the 64 MiB limit
    server = serve(
        lambda b, h: (200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, bomb)
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url, concurrency=1))
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        f"({len(bomb)} bytes as Content-Encoding 'gzip') decompresses to more than 67108864 bytes; refused"
        in err
    )


def test_a_body_longer_than_the_limit_is_refused(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    monkeypatch.setattr("ocg.generation.backends.openai_backend.MAX_BODY_BYTES", 1000)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(completion("A" * 2000)).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url, concurrency=1))
    assert (
        code == 1
        and err.count("ocg: error: ") == 1
        and "the body is longer than 1000 bytes; refused" in err
    ), err


def test_a_trickled_gzip_answer_still_meets_the_deadline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    body = gzip.compress(json.dumps(completion("A dog runs. " * 50)).encode())
    server = ScriptedServer(
        lambda b, h: (
            200,
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            body,
            0.1,
        )
    )
    t0 = time.monotonic()
    try:
        code, err = generate(
            tmp_path, capsys, api_entry(server.url, timeout_s=1, max_retries=0, concurrency=1)
        )
    finally:
        server.close()
    assert (
        code == 1
        and "no complete answer within timeout_s=1 s" in err
        and err.count("ocg: error: ") == 1
    ), err
    assert time.monotonic() - t0 < 15


def stream(content):
    chunks = [
        {"model": "local", "choices": [{"delta": {"content": content}, "finish_reason": "stop"}]}
    ]
    return (
        "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks)
        + "data: [DONE]\n\n"
    ).encode()


@pytest.mark.parametrize(
    "content_type, body",
    [
        ("text/plain", json.dumps(completion(ANSWER), ensure_ascii=False).encode()),
        ("text/event-stream", stream(ANSWER)),
        ("application/json", json.dumps(completion(ANSWER), ensure_ascii=False).encode()),
        (
            "text/plain; charset=utf-16",
            json.dumps(completion(ANSWER), ensure_ascii=False).encode("utf-16"),
        ),
    ],
)
def test_json_without_a_charset_is_utf8(tmp_path, capsys, monkeypatch, serve, content_type, body):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(lambda b, h: (200, {"Content-Type": content_type}, body))
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    assert set(read_generations(tmp_path / "gen" / "m").raw) == {ANSWER}


@pytest.mark.parametrize(
    "content_type, what",
    [
        ("text/plain", "UTF-8 (no charset named another)"),
        ("application/json; charset=utf-8", "utf-8"),
    ],
)
def test_bytes_invalid_in_the_charset_are_stored_with_a_note(
    tmp_path, capsys, monkeypatch, serve, content_type, what
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    body = (
        json.dumps(completion("A dog at the cafe."), ensure_ascii=False)
        .encode()
        .replace(b"cafe", b"caf\xe9")
    )
    server = serve(
        lambda b, h: (200, {"Content-Type": content_type}, body)
    )  # Latin-1 bytes, called UTF-8
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    note = f"the body is not valid {what}: 1 invalid byte sequence(s) stored as U+FFFD"
    df = read_generations(tmp_path / "gen" / "m")
    assert set(df.raw) == {"A dog at the caf\ufffd."} and all(
        list(n) == [note] for n in df.api_notes
    )
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert card["backend"]["api_notes"] == {note: 24}


def test_an_echoed_key_is_scrubbed_from_stored_answers_and_flagged(
    tmp_path, capsys, monkeypatch, serve
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                completion(
                    f"A dog runs. (you sent {h.get('Authorization')})",
                    model=f"echo {h.get('Authorization')}",
                )
            ).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    nothing_holds_the_key(tmp_path)
    df = read_generations(tmp_path / "gen" / "m")
    assert set(df.raw) == {"A dog runs. (you sent Bearer ***)"} and set(df.response_model) == {
        "echo Bearer ***"
    }
    assert all(
        n == ["the server echoed the API key into raw, response_model; replaced by ***"]
        for n in df.api_notes
    )
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert card["backend"]["api_notes"] == {
        "the server echoed the API key into raw, response_model; replaced by ***": 24
    }


@pytest.mark.parametrize(
    "extra, note",
    [
        ({"usage": [1, 2]}, "usage is a list, not an object; token counts stored as null"),
        (
            {"usage": {"prompt_tokens": "abc", "completion_tokens": 4}},
            "prompt_tokens 'abc' is not a token count",
        ),
        (
            {"usage": {"prompt_tokens": 3, "completion_tokens": -5}},
            "completion_tokens -5 is not a token count",
        ),
        ({"finish_reason": 5}, "finish_reason 5 is not text; stored as null"),
    ],
)
def test_answer_fields_of_the_wrong_kind_are_stored_as_null_and_noted(
    tmp_path, capsys, monkeypatch, serve, extra, note
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(completion("A dog runs.", **extra)).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    df = read_generations(tmp_path / "gen" / "m")
    assert all(any(note in n for n in notes) for notes in df.api_notes)
    for column in ("prompt_tokens", "completion_tokens", "finish_reason"):
        assert all(
            v is None or (isinstance(v, int) and v >= 0) or v == "stop" or v != v
            for v in df[column]
        ), column
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert any(note in k and v == 24 for k, v in card["backend"]["api_notes"].items())


def test_a_key_echoed_into_a_field_of_the_wrong_kind_stays_out_of_notes_and_stderr(
    tmp_path, capsys, monkeypatch, serve
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                completion(
                    "A dog runs.",
                    usage={"prompt_tokens": h.get("Authorization"), "completion_tokens": 3},
                )
            ).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0 and KEY not in err, err
    nothing_holds_the_key(tmp_path)  # the records' api_notes and the run card's count of them
    notes = read_generations(tmp_path / "gen" / "m").api_notes
    assert all(
        list(n) == ["prompt_tokens 'Bearer ***' is not a token count; stored as null"]
        for n in notes
    ), notes[0]


@pytest.mark.parametrize(
    "status, body",
    [
        (400, "x" * 285 + f"Bearer {KEY}"),
        (200, "x" * 285 + f"Bearer {KEY}"),
        (200, "data: " + "x" * 279 + f"Bearer {KEY}"),
    ],
)
def test_a_key_at_the_excerpts_edge_is_not_cut_in_half(
    tmp_path, capsys, monkeypatch, serve, status, body
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(lambda b, h: (status, {"Content-Type": "application/json"}, body.encode()))
    code, err = generate(tmp_path, capsys, api_entry(server.url, max_retries=0))
    assert code == 1 and err.count("ocg: error: ") == 1 and "Bearer ***" in err, err
    assert KEY[:7] not in err, err  # the excerpt is cut after the key was replaced, not before


@pytest.mark.parametrize(
    "choice, what",
    [
        ({"text": "A dog runs.", "finish_reason": "stop"}, "no message"),
        ({"message": "A dog runs."}, "a message that is a str"),
    ],
)
def test_an_answer_that_is_no_chat_message_is_an_error_not_an_empty_answer(
    tmp_path, capsys, monkeypatch, serve, choice, what
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps({"choices": [choice]}).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert f"HTTP 200: {what} in the first choice, not a chat completion" in err, err


def test_a_null_content_is_stored_empty_with_a_note(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                {
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": None, "refusal": "No."},
                            "finish_reason": "stop",
                        }
                    ]
                }
            ).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    df = read_generations(tmp_path / "gen" / "m")
    assert set(df.raw) == {""} and all(
        list(n) == ["message content is null; stored as an empty answer"] for n in df.api_notes
    )


# -- a server started for the run, with a key ------------------------------------------------------


@pytest.mark.parametrize(
    "mode, listed", [("ok", ["served"]), ("echomodels", ["served", "Bearer ***"])]
)  # the key listed as a model
def test_a_key_protected_server_starts_with_its_key_never_written(
    tmp_path, capsys, monkeypatch, mode, listed
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    code, err = generate(
        tmp_path, capsys, server_entry(tmp_path, f"--api-key {{key}} --mode {mode}")
    )
    assert code == 0, err
    nothing_holds_the_key(tmp_path)
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    server = card["backend"]["server"]
    assert server["command"][-3:] == ["***", "--mode", mode] and server["models_listed"] == listed
    assert server["version"] == '{"version": "9.9"}'  # /version was asked with the key too
    assert (
        "'--api-key', '***'" in (tmp_path / "gen" / "m" / "server.log").read_text()
    )  # its own output, scrubbed
    assert len(read_generations(tmp_path / "gen" / "m")) == 24


def test_a_models_list_of_null_lists_no_models(tmp_path, capsys):
    code, err = generate(tmp_path, capsys, server_entry(tmp_path, "--mode null", key_env=None))
    assert code == 0, err
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert (
        card["backend"]["server"]["models_listed"] == []
    )  # {"data": null}: none listed, no traceback


def test_a_server_that_wants_a_key_it_was_not_given_is_named_at_once(tmp_path, capsys):
    code, err = generate(
        tmp_path,
        capsys,
        server_entry(tmp_path, f"--api-key {KEY}", key_env=None, startup_timeout_s=60),
    )
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        "answers GET http://127.0.0.1:" in err and "/v1/models with HTTP 401: it wants a key" in err
    ), err
    assert "models.m.api.key_env" in err and "did not answer" not in err


def test_a_refused_key_on_the_readiness_poll_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_HTTP_KEY", "sk-the-wrong-one")
    code, err = generate(
        tmp_path, capsys, server_entry(tmp_path, f"--api-key {KEY}", startup_timeout_s=60)
    )
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        "HTTP 401: the key in $OCG_HTTP_KEY was refused" in err and "sk-the-wrong-one" not in err
    ), err


def test_a_readiness_poll_answered_with_another_status_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    code, err = generate(
        tmp_path, capsys, server_entry(tmp_path, "--mode 404", startup_timeout_s=3)
    )
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        "did not answer" in err and "with HTTP 200 within 3 s (its last answer: HTTP 404" in err
    ), err


FAILING_SERVE = r"""
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):  # as transformers 5's serve while its hub cache folder is missing
        self.send_response(500); self.send_header("Content-Length", "21"); self.end_headers()
        self.wfile.write(b"Internal Server Error")
HTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), H).serve_forever()
"""


@pytest.mark.parametrize(
    "program, cache_exists, hinted",
    [("transformers", False, True), ("transformers", True, False), ("vllm", False, False)],
)
def test_a_serve_answering_500_without_a_hub_cache_folder_is_told_so(
    tmp_path, capsys, monkeypatch, program, cache_exists, hinted
):
    from huggingface_hub import constants

    cache = tmp_path / "hub-cache"
    if cache_exists:
        cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    fake = tmp_path / "bin" / program
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\n{FAILING_SERVE}")
    fake.chmod(0o755)
    entry = {
        "id": "served",
        "backend": "openai",
        "max_new_tokens": 32,
        "api": {
            "base_url": "http://127.0.0.1:{port}/v1",
            "max_retries": 0,
            "server": {"command": f"{fake} serve served --port {{port}}", "startup_timeout_s": 2},
        },
    }
    code, err = generate(tmp_path, capsys, entry)
    assert code == 1 and "(its last answer: HTTP 500: 'Internal Server Error'" in err, err
    hint = f"transformers serve answers that while its hub cache folder {cache} does not exist: create it"
    assert (hint in err) == hinted, err


def test_a_readiness_poll_that_echoes_the_key_at_the_excerpts_edge_leaks_no_part(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    code, err = generate(
        tmp_path, capsys, server_entry(tmp_path, "--mode echo404", startup_timeout_s=3)
    )
    assert code == 1 and "(its last answer: HTTP 404" in err and "Bearer ***" in err, err
    assert KEY[:7] not in err, err


# -- inputs refused before any request -------------------------------------------------------------
@pytest.mark.parametrize(
    "entry, where, what",
    [
        (
            {
                "id": "a/b",
                "backend": "openai",
                "api": {"base_url": f"https://user:{KEY}@api.example.com/v1", "key_env": "K"},
            },
            "models.m.api.base_url",
            "holds credentials (user:password@host)",
        ),
        (
            {
                "id": "a/b",
                "backend": "openai",
                "api": {
                    "base_url": "http://127.0.0.1:{port}/v1",
                    "server": {"command": "vllm serve {id} --api-key {key}"},
                },
            },
            "models.m.api.server.command",
            "uses {key}, but api.key_env names no variable",
        ),
    ],
)
def test_entries_that_would_leak_or_lack_the_key_are_refused(tmp_path, capsys, entry, where, what):
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": {"m": entry}}))
    code, err = run_cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.count("ocg: error: ") == 1, err
    assert err.startswith(f"ocg: error: {path}: {where}: ") and what in err and KEY not in err, err


# -- answers nested past what Python's JSON parser follows ------
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    "content_type, body",
    [("application/json", DEEP), ("text/event-stream", b"data: " + DEEP + b"\n\n")],
)
def test_an_answer_nested_100000_deep_is_one_clear_error(
    tmp_path, capsys, monkeypatch, serve, content_type, body
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(lambda b, h: (200, {"Content-Type": content_type}, body))
    code, err = generate(tmp_path, capsys, api_entry(server.url, max_retries=0))
    assert code == 1 and err.count("ocg: error: ") == 1 and "RecursionError" not in err, err
    assert "not JSON" in err, err


def test_a_models_list_nested_100000_deep_lists_no_models(tmp_path, capsys):
    code, err = generate(tmp_path, capsys, server_entry(tmp_path, "--mode deep", key_env=None))
    assert code == 0, err
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert card["backend"]["server"]["models_listed"] == []
