"""A short key ("test", "jump": words an answer may hold) is scrubbed only where it stands as sent,
`Bearer <key>`, and refused for a server ocg starts with {key}; a key of 16 or
more characters is scrubbed wherever it stands. Through the real CLI against local servers."""

import json

import pytest

from ocg.generation import read_generations
from tests.generation.hostile_http import (
    KEY,
    api_entry,
    completion,
    generate,
    nothing_holds_the_key,
    server_entry,
)

ANSWER = "The dog will jump over the log and test the ice."


def test_a_short_key_leaves_answers_that_hold_it_as_a_word_intact(
    tmp_path, capsys, monkeypatch, serve
):
    monkeypatch.setenv("OCG_HTTP_KEY", "jump")
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(completion(ANSWER)).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    df = read_generations(tmp_path / "gen" / "m")
    assert set(df.raw) == {ANSWER} and all(list(n) == [] for n in df.api_notes)


def test_a_short_key_echoed_as_its_header_is_scrubbed(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", "jump")
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                completion(f"The dog will jump. (you sent {h.get('Authorization')})")
            ).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    df = read_generations(tmp_path / "gen" / "m")
    assert set(df.raw) == {"The dog will jump. (you sent Bearer ***)"}
    assert all(
        list(n) == ["the server echoed the API key into raw; replaced by ***"] for n in df.api_notes
    )


def test_a_long_key_echoed_bare_is_scrubbed(tmp_path, capsys, monkeypatch, serve):
    assert len(KEY) >= 16
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                completion(f"A dog runs. key={h.get('Authorization').split()[-1]}")
            ).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 0, err
    nothing_holds_the_key(tmp_path)
    assert set(read_generations(tmp_path / "gen" / "m").raw) == {"A dog runs. key=***"}


@pytest.mark.parametrize("key", ["jump", "x" * 15])
def test_a_short_key_for_a_server_started_with_it_is_refused(tmp_path, capsys, monkeypatch, key):
    monkeypatch.setenv("OCG_HTTP_KEY", key)
    code, err = generate(tmp_path, capsys, server_entry(tmp_path, "--api-key {key}"))
    assert code == 2 and err.count("ocg: error: ") == 1, err
    assert (
        f"ocg: error: models.m.api.key_env: the key in $OCG_HTTP_KEY has {len(key)} character(s); a server "
        "started with {key} needs one of at least 16"
    ) in err, err
    assert key not in err.replace("key_env", "")
    assert not (tmp_path / "gen" / "m" / "server.log").exists()  # refused before the server started


def test_a_short_key_sent_only_in_the_header_to_a_started_server_is_taken(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OCG_HTTP_KEY", "test")  # the server is started without {key}: it wants none
    code, err = generate(tmp_path, capsys, server_entry(tmp_path, "--mode ok"))
    assert code == 0, err
    assert set(read_generations(tmp_path / "gen" / "m").raw) == {"A dog runs."}
