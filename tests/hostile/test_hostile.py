"""Hostile inputs and faults through the real CLI: bad input exits 2 with one
`ocg: error: <where>: <what>` line, a fault (disk, server, Ctrl-C) exits non-zero with one line
naming what failed; never a traceback, and nothing half-done is left for a later run to trust."""

import errno
import json
import os
import sys

import pytest
import yaml

import ocg.core.files
from ocg.cli import main
from ocg.core.paths import CONCEPT_SETS_FILE, TEMPLATES_FILE
from ocg.data import read_concept_sets
from ocg.generation import GenerationStore
from tests.config.bad_params import BAD_TEMPLATES, MODEL_ENTRIES
from tests.helpers import write_generations
from tests.hostile.cases import cli, models_file, replay_run, reseal, tree, victim

TEMPLATES = TEMPLATES_FILE.read_text()
SETS = CONCEPT_SETS_FILE.read_text().splitlines()


# -- inputs that cannot be valid: refused before any work, naming the field ----------------------
@pytest.mark.parametrize("entry, where, what", MODEL_ENTRIES)
def test_model_entries_that_would_fail_mid_run_are_refused(tmp_path, capsys, entry, where, what):
    path = models_file(tmp_path, entry)
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: {where}: ") and what in err, err


@pytest.mark.parametrize("change, where, what", BAD_TEMPLATES)
def test_templates_hold_only_plain_placeholders(tmp_path, capsys, change, where, what):
    text = TEMPLATES.replace(*change)
    if "old_templates" in text:  # the template texts moved under another key, templates left empty
        text = text.replace("old_templates:\n", "").split("templates: {}\n")[0] + "templates: {}\n"
    assert text != TEMPLATES
    path = tmp_path / "templates.yaml"
    path.write_text(text)
    code, err = cli(
        capsys, "build-data", "--subset-k", 1, "--templates", path, "--out", tmp_path / "d"
    )
    assert code == 2 and err.startswith(f"ocg: error: {path}: {where}") and what in err, err
    assert not (tmp_path / "d").exists()


def _set(set_id, *concepts):
    return json.dumps({"id": set_id, "concept_set": list(concepts)})


BAD_SETS = [  # (a line added to the concept sets, what is said)
    (_set("x1", "Dog_N", "catch_V", "frisbee_N", "throw_V"), "expected a lower-case word"),
    (_set("x2", "do\tg_N", "catch_V", "frisbee_N", "throw_V"), "expected one word of letters"),
    (
        _set("x3", "dog\u00a0house_N", "catch_V", "frisbee_N", "throw_V"),
        "expected one word of letters",
    ),
    (_set("x4", "do\ng_N", "catch_V", "frisbee_N", "throw_V"), "expected one word of letters"),
    (_set("x5", "dog\u200b_N", "catch_V", "frisbee_N", "throw_V"), "expected one word of letters"),
    (
        _set(None, "dog_N", "catch_V", "frisbee_N", "throw_V"),
        '"id" must be a non-empty string or an integer',
    ),
    ('{"id": NaN, "concept_set": ["dog_N", "catch_V", "frisbee_N", "throw_V"]}', '"id" must be'),
    (SETS[0].replace(json.loads(SETS[0])["id"], "copy-of-first"), "has the concepts of set"),
]


@pytest.mark.parametrize("line, what", BAD_SETS)
def test_concept_sets_are_lower_case_words_with_distinct_ids_and_concepts(
    tmp_path, capsys, line, what
):
    path = tmp_path / "sets.jsonl"
    path.write_text("\n".join(SETS + [line]) + "\n")
    with pytest.raises(ValueError, match=what):  # the Python API
        read_concept_sets(path)
    code, err = cli(
        capsys, "build-data", "--subset-k", 1, "--concept-sets", path, "--out", tmp_path / "d"
    )
    assert code == 2 and err.startswith(f"ocg: error: {path}:{len(SETS) + 1}: ") and what in err, (
        err
    )


def test_a_capitalised_concept_beside_its_lower_case_twin_is_refused(tmp_path):
    path = tmp_path / "sets.jsonl"
    path.write_text(
        _set("a", "dog_N", "catch_V", "frisbee_N", "throw_V")
        + "\n"
        + _set("b", "Dog_N", "catch_V", "frisbee_N", "throw_V")
        + "\n"
    )
    with pytest.raises(ValueError, match=f"{path}:2: concept 'Dog_N': expected a lower-case word"):
        read_concept_sets(path)


# -- faults: a clear line, a non-zero exit, nothing half-done -------------------------------------
def fail_writes(monkeypatch, code: int) -> None:
    """Every atomic write (ocg.core.files) fails as a full disk (28) or a read-only file system (30) does."""

    def make_temp(*args, **kwargs):
        raise OSError(code, "simulated", "/somewhere/.tmp")

    monkeypatch.setattr(ocg.core.files, "make_temp", make_temp)


@pytest.mark.parametrize(
    "code, what", [(errno.ENOSPC, "no space left"), (errno.EROFS, "read-only file system")]
)
def test_build_data_on_a_full_or_read_only_disk(tmp_path, capsys, monkeypatch, code, what):
    fail_writes(monkeypatch, code)
    status, err = cli(capsys, "build-data", "--subset-k", 1, "--out", tmp_path / "d")
    assert status == 1 and what in err and str(tmp_path / "d") in err, err


@pytest.mark.parametrize(
    "code, what", [(errno.ENOSPC, "no space left"), (errno.EROFS, "read-only file system")]
)
def test_score_on_a_full_or_read_only_disk(tmp_path, capsys, monkeypatch, code, what):
    write_generations(
        tmp_path / "gen",
        "m",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": 0,
                "concepts": ["dog", "run"],
                "answer": "A dog runs.",
            }
        ],
    )
    fail_writes(monkeypatch, code)
    status, err = cli(
        capsys,
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
    )
    assert status == 1 and what in err and str(tmp_path / "scores" / "m") in err, err
    assert [p.name for p in (tmp_path / "scores").rglob("*.*")] == [
        ".lock"
    ]  # the scorer's lock, empty


def test_report_whose_notebook_cannot_be_written(tmp_path, capsys, monkeypatch, outputs):
    def full(
        source, executed, **kwargs
    ):  # papermill on a full disk: an empty copy, an error without a path
        open(executed, "w").close()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("papermill.execute_notebook", full)
    status, err = cli(capsys, "report")
    copy = outputs / "reports" / "demo.building~" / "00_build_data.ipynb"  # built there, then moved
    assert status == 1 and f"ocg: error: {copy}: no space left" in err, err


def test_a_full_disk_during_generate_leaves_the_run_card_failed(tmp_path, capsys, monkeypatch):
    disk = {"full": False}
    real_make_temp = ocg.core.files.make_temp

    class FullDisk:  # the os module of the store's appends, whose write finds the disk full
        def __getattr__(self, name):
            return getattr(os, name)

        def write(self, fd, data):
            disk["full"] = True
            raise OSError(errno.ENOSPC, "No space left on device")

    def make_temp(*args, **kwargs):
        if disk["full"]:
            raise OSError(errno.ENOSPC, "No space left on device", "/x/.tmp")
        return real_make_temp(*args, **kwargs)

    monkeypatch.setattr("ocg.generation.answer_store.appending.os", FullDisk())
    monkeypatch.setattr(ocg.core.files, "make_temp", make_temp)
    status, err = cli(capsys, "generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path))
    prompts = (
        tmp_path / "gen" / "m" / "ordered.prompts.jsonl.gz"
    )  # the run's first write (store format 2)
    assert status == 1 and f"ocg: error: {prompts}: no space left" in err, err
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert card["status"] == "failed" and card["runs"][-1]["status"] == "failed"
    assert "No space left" in card["runs"][-1]["error"]


def test_outputs_pointing_at_a_file(tmp_path, capsys, monkeypatch):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    monkeypatch.setenv("OCG_OUTPUTS", str(a_file))
    status, err = cli(capsys, "build-data", "--subset-k", 1)
    assert status == 2 and err.startswith(f"ocg: error: OCG_OUTPUTS: {a_file} is a file;"), err
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "out"))  # --out alone names the file now
    status, err = cli(capsys, "generate", "m", "--out", a_file, *replay_run(tmp_path))
    assert (
        status == 2 and "a file stands where a directory is needed" in err and str(a_file) in err
    ), err
    assert a_file.read_text() == ""


def test_a_local_model_folder_without_a_model(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    path = models_file(tmp_path, f"{{id: {tmp_path / 'empty'}, quantization: none}}")
    status, err = cli(
        capsys,
        "generate",
        "m",
        "--models-file",
        path,
        "--out",
        tmp_path / "gen",
        "--subset-k",
        1,
        "--templates",
        0,
    )
    assert (
        status == 2 and err.startswith("ocg: error: models.m.id: ") and "holds no model" in err
    ), err


PRINT_ARGV_AND_EXIT = f"{sys.executable} -c 'import sys; print(sys.argv[1:]); sys.exit(3)'"


@pytest.mark.parametrize(
    "command, status, what",
    [
        (PRINT_ARGV_AND_EXIT, 1, "the server exited with status 3"),
        (
            PRINT_ARGV_AND_EXIT
            + """ --hf-overrides '{"max_position_embeddings": 4096}' --port {port}""",
            1,
            """'--hf-overrides', '{"max_position_embeddings": 4096}', '--port', 'PORT']""",
        ),
        (
            "/nonexistent/bin/vllm serve {id}",
            2,
            "models.m.api.server.command: cannot start '/nonexistent/bin/vllm'",
        ),
    ],
)
def test_a_server_that_cannot_start(tmp_path, capsys, command, status, what):
    from ocg.generation.servers.server import free_port

    port, path = free_port(), tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "models": {
                    "m": {
                        "id": "a/b",
                        "backend": "openai",
                        "api": {
                            "base_url": "http://127.0.0.1:{port}/v1",
                            "server": {"command": command, "port": port},
                        },
                    }
                }
            }
        )
    )
    code, err = cli(
        capsys,
        "generate",
        "m",
        "--models-file",
        path,
        "--out",
        tmp_path / "gen",
        "--subset-k",
        1,
        "--templates",
        0,
    )
    assert code == status and what.replace("PORT", str(port)) in err, err


def test_ctrl_c_during_score(tmp_path, capsys, monkeypatch):
    write_generations(
        tmp_path / "gen",
        "m",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": 0,
                "concepts": ["dog", "run"],
                "answer": "A dog runs.",
            }
        ],
    )

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("ocg.metrics.diversity.distinct2_sentence", interrupted)
    status, err = cli(
        capsys,
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
    )
    assert status == 130 and "interrupted" in err
    assert [p.name for p in (tmp_path / "scores").rglob("*.*")] == [
        ".lock"
    ]  # the scorer's lock, empty  # no table, no signature, no temporary file


# -- answers that are odd but real: kept, scored and flagged ---------------------------------------
def test_odd_answers_are_written_scored_and_flagged(tmp_path):
    odd = {0: "\ud800 A dog runs.", 1: "\u200b\u200b", 2: "\ufeff", 3: "\U0001f600\U0001f600"}

    def answers(i, concepts):  # the fifth: the concepts, then over 1,000,000 characters
        return " ".join(concepts) + " and" * 300_000 if i == 4 else odd.get(i)

    assert (
        main(
            [
                str(a)
                for a in [
                    "generate",
                    "m",
                    "--out",
                    tmp_path / "gen",
                    *replay_run(tmp_path, answers),
                ]
            ]
        )
        == 0
    )
    records = GenerationStore.read(tmp_path / "gen" / "m" / "ordered.jsonl")
    assert records[0]["answer"] == "\ufffd A dog runs."  # the lone surrogate, made writable
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "scores"),
                "--metrics",
                "coverage",
            ]
        )
        == 0
    )
    import pandas as pd

    scored = pd.read_parquet(tmp_path / "scores" / "m" / "answers.parquet")
    by_answer = scored.drop_duplicates("answer").set_index("answer")
    assert (
        by_answer.loc["\ufffd A dog runs."].replaced_chars
        and not by_answer.loc["A dog runs."].replaced_chars
    )
    for text in list(odd.values())[1:]:
        assert by_answer.loc[text].no_letters and not by_answer.loc[text].empty
    assert not by_answer.loc["A dog runs."].no_letters
    long = scored.iloc[[len(a) > 1_000_000 for a in scored.answer]].iloc[0]
    assert long.overlong and long.all_present and long.in_order  # scored on its first characters


def test_answers_without_letters_are_flagged():
    from ocg.metrics.degenerate import flags

    for text in ("\u200b\u200b", "\ufeff", "\U0001f600\U0001f600", "?!"):
        assert flags(text)["no_letters"] and not flags(text)["empty"], text
    assert not flags("A dog runs.")["no_letters"] and not flags("")["no_letters"]
    assert flags("A d\ufffdg.")["replaced_chars"] and not flags("A dog.")["replaced_chars"]


def test_coverage_of_an_answer_over_a_million_characters():
    import pandas as pd

    from ocg.metrics.coverage import load_nlp, score_coverage

    long = "A dog catches the frisbee." + " and" * 300_000
    out = score_coverage(
        pd.Series([long, "A cat."]), pd.Series([["dog", "frisbee"], ["dog", "frisbee"]]), load_nlp()
    )
    assert out.all_present.tolist() == [True, False] and out.in_order.tolist() == [True, False]


def test_server_command_fills_only_its_placeholders(tmp_path):
    from ocg.config.model_registry import parse_models
    from ocg.generation.servers.server import ServerError, free_port, running_server

    port = free_port()
    overrides = '{"max_position_embeddings": 4096}'
    command = (
        f"{sys.executable} -c 'import sys; print(sys.argv[1:]); sys.exit(3)' --hf-overrides "
        f"'{overrides}' --model {{id}} --port {{port}} --dir {{model_dir}}"
    )
    spec = parse_models(
        {
            "models": {
                "m": {
                    "id": "a/b",
                    "backend": "openai",
                    "api": {
                        "base_url": "http://127.0.0.1:{port}/v1",
                        "server": {"command": command, "port": port},
                    },
                }
            }
        },
        "f",
    )["m"]
    with pytest.raises(ServerError, match="exited with status 3"):
        with running_server(spec, tmp_path / "server.log"):
            pass
    argv = ["--hf-overrides", overrides, "--model", "a/b", "--port", str(port), "--dir", "a/b"]
    assert (tmp_path / "server.log").read_text().strip() == str(argv)


def test_the_installed_entry_point_prints_one_line_and_exits_2(tmp_path):
    import subprocess

    a_file = tmp_path / "a_file"
    a_file.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "build-data", "--subset-k", "1", "--out", str(a_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "OCG_OUTPUTS": str(tmp_path)},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(
        f"ocg: error: {a_file}: a file stands where a directory is needed"
    ), done.stderr


# -- links ocg did not make: refused, naming the link; the target byte-for-byte untouched


def papermill_fails(monkeypatch):
    def fails(source, executed, **kwargs):
        raise OSError(errno.EIO, "the report should never have started")

    monkeypatch.setattr("papermill.execute_notebook", fails)


@pytest.mark.parametrize("link", ["demo.building~", "demo.old~", "demo", "demo.building~/.lock"])
def test_report_refuses_a_link_where_it_clears_or_swaps(
    tmp_path, capsys, monkeypatch, outputs, link
):
    target, before = victim(tmp_path)
    reports = outputs / "reports"
    reports.mkdir(parents=True)
    if link.endswith(".lock"):
        (reports / "demo.building~").mkdir()
    if link != "demo":
        (reports / "demo").mkdir()
        (reports / "demo" / "index.html").write_text("the previous report\n")
    if link.endswith(".lock"):
        target = target / "thesis.tex"  # a lock that is a link to someone's file
    (reports / link).symlink_to(target)
    papermill_fails(monkeypatch)
    status, err = cli(capsys, "report")
    assert status == 2 and f"ocg: error: {reports / link}: a symbolic link (to {target})" in err, (
        err
    )
    assert tree(tmp_path / "victim") == before
    if link != "demo":
        assert (reports / "demo" / "index.html").read_text() == "the previous report\n"
    assert (reports / link).is_symlink()


def test_score_refuses_a_scores_folder_that_is_a_link(tmp_path, capsys):
    target, before = victim(tmp_path)
    write_generations(
        tmp_path / "gen",
        "m",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": 0,
                "concepts": ["dog", "run"],
                "answer": "A dog runs.",
            }
        ],
    )
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "m").symlink_to(target)
    status, err = cli(
        capsys,
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
    )
    assert status == 2 and f"ocg: error: {tmp_path / 'scores' / 'm'}: a symbolic link" in err, err
    assert tree(target) == before


def test_repair_refuses_a_backup_that_is_a_link(tmp_path, capsys):
    target, before = victim(tmp_path)
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": 0,
            "concepts": ["dog", "run"],
            "answer": "A dog runs.",
        }
    ]
    store = write_generations(tmp_path / "gen", "m", rows) / "ordered.jsonl"
    store.write_bytes(
        store.read_bytes() * 2
    )  # a record written twice: repair keeps one, backs up the file
    (tmp_path / "gen" / "m" / "ordered.jsonl.bak").symlink_to(target / "thesis.tex")
    status, err = cli(capsys, "repair", tmp_path / "gen" / "m")
    assert status == 2 and "ordered.jsonl.bak: a symbolic link" in err, err
    assert tree(target) == before


def test_a_converted_model_folder_that_is_a_link_is_refused_before_converting(
    tmp_path, monkeypatch
):
    import ocg.weights.embedded
    from ocg.core.errors import OcgInputError

    target, before = victim(tmp_path)
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "smollm2-135m-instruct").symlink_to(target)
    (tmp_path / "models" / "smollm2-135m-instruct.transformers5").symlink_to(target)
    monkeypatch.setattr(
        ocg.weights.embedded, "gguf_path", lambda name: pytest.fail("converting into a link")
    )
    with pytest.raises(OcgInputError, match="a symbolic link"):
        ocg.weights.embedded.ensure_converted("smollm2-135m-instruct")
    assert tree(target) == before


# -- parameter and data files built to exhaust the reader -------------------------------
DEEP = "[" * 100_000 + "]" * 100_000


def alias_bomb() -> str:
    """Eight levels of ten aliases: 10^9 values from a few hundred bytes, in a model's field."""
    levels = ["&a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)
    ]
    return "{id: a/b, seed: [" + ", ".join(levels) + "]}"


def test_a_yaml_alias_bomb_is_refused_while_loading(tmp_path):
    import resource
    import subprocess
    import time

    path = models_file(tmp_path, alias_bomb())

    def two_gb():  # main took 117 s and 4.5 GB; a regression fails here, not the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "models", "--models-file", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=two_gb,
    )
    assert done.returncode == 2 and done.stderr.count("ocg: error: ") == 1, done.stderr[-2000:]
    assert f"{path}: invalid YAML: aliases (*name) expand to over 10,000 values" in done.stderr
    assert len(done.stderr) < 1000 and time.monotonic() - start < 30


@pytest.mark.parametrize(
    "entry, what",
    [
        ("{id: a/b, seed: " + DEEP + "}", "invalid YAML: nested deeper than 100 levels"),
        ("{id: a/b, seed: &s [1, *s]}", "a recursive alias"),
        ("{id: a/b, <<: {seed: 1}}", "merge keys are not supported"),
        ("{id: a/b, seed: '" + "x" * 100_000 + "'}", "models.m.seed: expected int"),
        (
            "{id: a/b, backend: openai, api: {key_env: K, base_url: 'ftp://"
            + "x" * 100_000
            + "'}}",
            "models.m.api.base_url: got 'ftp://xx",
        ),
    ],
)
def test_yaml_that_nests_merges_or_repeats_without_end_is_refused(tmp_path, capsys, entry, what):
    path = models_file(tmp_path, entry)
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: ") and what in err, err
    assert len(err) < 1000  # a long value is cut in the message


@pytest.mark.parametrize(
    "value, what", [(DEEP, "nested deeper than 100 levels"), ("[&a [1, *a]]", "recursive alias")]
)
def test_a_notebook_parameter_is_read_with_the_same_limits(capsys, value, what):
    code, err = cli(capsys, "run-notebook", "00_build_data", "-p", f"subset_k={value}")
    assert (
        code == 2
        and err.startswith("ocg: error: -p subset_k: value ")
        and what in err
        and len(err) < 1000
    ), err


def test_nested_brackets_in_a_concept_set_file(tmp_path, capsys):
    path = tmp_path / "sets.jsonl"
    path.write_text("\n".join(SETS + [DEEP]) + "\n")
    code, err = cli(
        capsys, "build-data", "--subset-k", 1, "--concept-sets", path, "--out", tmp_path / "d"
    )
    assert code == 2 and f"{path}:{len(SETS) + 1}: malformed JSON (nested too deeply" in err, err


@pytest.mark.parametrize(
    "spoilt, what",
    [
        ("run_card.json", "not valid JSON: nested too deeply"),
        ("ordered.jsonl", ":25: malformed record"),
        ("answers.jsonl", ":25: not JSON (nested too deeply"),
    ],
)
def test_nested_brackets_in_a_run_card_a_store_or_a_replay_file(tmp_path, capsys, spoilt, what):
    args = ["generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path)]
    assert main([str(a) for a in args]) == 0
    path = (
        tmp_path / "answers.jsonl" if spoilt == "answers.jsonl" else tmp_path / "gen" / "m" / spoilt
    )
    if spoilt == "run_card.json":
        path.write_text(DEEP)
    else:
        path.write_text(path.read_text() + DEEP + "\n")
    if spoilt == "answers.jsonl":  # read by a fresh run
        args[3] = tmp_path / "gen2"
    capsys.readouterr()
    code, err = cli(capsys, *args)
    assert code == 2 and f"ocg: error: {path}" in err and what in err, err


def test_a_run_card_with_a_byte_order_mark_is_read(tmp_path, capsys):
    args = ["generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path)]
    assert main([str(a) for a in args]) == 0
    card = tmp_path / "gen" / "m" / "run_card.json"
    card.write_bytes(b"\xef\xbb\xbf" + card.read_bytes())  # as an editor on Windows saves it
    assert main([str(a) for a in args]) == 0
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "scores"),
                "--metrics",
                "distinct",
            ]
        )
        == 0
    )


# -- the command line and the API say what they do ---------------------------------------
def test_top_p_without_temperature_is_refused(tmp_path, capsys):
    code, err = cli(
        capsys, "generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path), "--top-p", 0.9
    )
    assert code == 2 and err.startswith("ocg: error: --top-p: got 0.9 without --temperature"), err
    assert not (tmp_path / "gen").exists()


def test_fewer_samples_asked_than_a_folder_holds_is_said(tmp_path, capsys):
    from ocg.generation import select_instances

    args = ["generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path), "--temperature", 1]
    with (tmp_path / "answers.jsonl").open("w") as fh:
        for iid in select_instances(None, ["ordered"], 1, [0]).instance_id:
            for sample in range(3):
                fh.write(
                    json.dumps({"instance_id": iid, "sample": sample, "answer": "A dog runs."})
                    + "\n"
                )
    assert main([str(a) for a in args + ["--samples", 3]]) == 0
    capsys.readouterr()
    assert main([str(a) for a in args + ["--samples", 2]]) == 0
    out = capsys.readouterr().out
    assert (
        "72 of 72 asked answers (3 samples of each instance); this run asked 2 sample(s), but the "
        "folder holds 3" in out
    ), out


def test_load_scores_takes_a_list_of_names(tmp_path, monkeypatch):
    from ocg.core.errors import OcgInputError
    from ocg.results.scores import load_scores

    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "outputs"))
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "run"],
            "answer": "A dog runs.",
        }
        for p in range(2)
    ]
    for model in ("a", "b"):
        write_generations(tmp_path / "gen", model, rows)
    assert main(["score", "--generations", str(tmp_path / "gen"), "--metrics", "distinct"]) == 0
    assert set(load_scores(["a"]).summary.model) == {"a"}
    assert set(load_scores(models=["a", "b"]).summary.model) == {"a", "b"}
    with pytest.raises(OcgInputError, match="expected a folder, or one list of model names"):
        load_scores(["a"], models=["b"])


# -- score tables edited by hand and resealed: checked against docs/DATA.md on read ------
@pytest.fixture(scope="module")
def scored_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("sealed")
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "run"],
            "answer": ["A dog runs.", "Run, dog."][p % 2],
        }
        for p in range(2)
    ]
    write_generations(root / "gen", "m", rows)
    assert (
        main(
            [
                "score",
                "--generations",
                str(root / "gen"),
                "--out",
                str(root / "scores"),
                "--metrics",
                "coverage",
                "distinct",
                "diverse",
            ]
        )
        == 0
    )
    return root / "scores"


TAMPERED = [  # (table, change, column named, what is said)
    (
        "summary",
        lambda f: f.drop(columns=["coverage_w_order"]),
        "",
        "column(s) coverage_w_order missing",
    ),
    (
        "summary",
        lambda f: f.assign(model="other"),
        ": column model",
        "got 'other' in 1 row(s); expected 'm'",
    ),
    ("summary", lambda f: f.iloc[:0], "", "no rows"),
    ("answers", lambda f: f.assign(in_order=7), ": column in_order", "expected bool, got int64"),
    ("answers", lambda f: f.assign(in_order="yes"), ": column in_order", "expected bool, got"),
    ("answers", lambda f: f.iloc[[0, 0, 1]], ": columns instance_id", "2 rows share a key"),
    (
        "groups",
        lambda f: f.assign(diverse_rate=1.5),
        ": column diverse_rate",
        "outside fraction 0-1 (e.g. 1.5)",
    ),
]


@pytest.mark.parametrize("table, change, column, what", TAMPERED)
def test_a_resealed_score_table_is_checked_on_read(
    tmp_path, scored_set, table, change, column, what
):
    import shutil

    from ocg.core.errors import OcgInputError
    from ocg.results.scores import load_scores

    shutil.copytree(scored_set, tmp_path / "scores")
    path = reseal(tmp_path / "scores" / "m", table, change)
    with pytest.raises(OcgInputError) as caught:
        load_scores(tmp_path / "scores")
    assert str(caught.value).startswith(f"{path}{column}: ") and what in str(caught.value), (
        caught.value
    )


@pytest.mark.slow
def test_a_resealed_score_table_stops_a_notebook_naming_file_and_column(
    tmp_path, capsys, scored_set, monkeypatch
):
    import shutil

    shutil.copytree(scored_set, tmp_path / "outputs" / "scores")
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "outputs"))
    path = reseal(tmp_path / "outputs" / "scores" / "m", "answers", lambda f: f.assign(in_order=7))
    code = main(["run-notebook", "03_main_results", "--out", str(tmp_path / "nb")])
    err = capsys.readouterr().err
    assert code == 1 and f"{path}: column in_order: expected bool, got int64" in err, err
