"""Every run, sweep and models file the shipped JSON Schemas (params/schema/*.json) allow is
either refused at load (exit 2, one `ocg: error:` line naming the file and a key of it) or passes
the plan check (`ocg report RUN --check`, `ocg sweep FILE --check`): no key may fail later,
in a notebook (docs/DEVELOPERS.md, "a fix closes the class"). Files drawn with
hypothesis-jsonschema from (a) the raw schema, (b) one key at a time over a valid base, so every
key the schema offers is reached with the rest valid; through the real CLI entry, in-process.
The slow test runs two accepted files end to end on the replay backend."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from ocg.cli import main
from ocg.core.paths import PARAMS_DIR, PROJECT_ROOT

SCHEMAS = {
    k: json.loads((PARAMS_DIR / "schema" / f"{k}.schema.json").read_text())
    for k in ("run", "sweep", "models")
}
EXAMPLES = int(os.environ.get("OCG_PROPERTY_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
REPLAY = {
    "models": {
        "rp-a": {"backend": "replay", "id": "x/a", "replay": {"rates": {"reorder": 0.3}}},
        "rp-b": {"backend": "replay", "id": "x/b", "replay": {"rates": {"drop": 0.2}}},
    }
}


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root = tmp_path_factory.mktemp("schema_property")
    (root / "models.yaml").write_text(yaml.safe_dump(REPLAY))
    return root


def base(place: Path) -> dict:
    """A valid run file on the replay fixture (small: one set, one template)."""
    return {
        "name": "prop",
        "models": ["rp-a", "rp-b"],
        "conditions": ["original", "ordered"],
        "models_file": str(place / "models.yaml"),
        "outputs": str(place / "out"),
        "subset_k": 1,
        "template_ids": [0],
    }


def sub_schema(kind: str, part: dict) -> dict:
    return {**part, "$defs": SCHEMAS[kind].get("$defs", {})}


def one_key(kind: str) -> st.SearchStrategy:
    """(key, value): one top-level key of the schema, or one key of `scoring`, drawn from its own
    schema (the rest of the file stays valid)."""
    props = SCHEMAS[kind]["properties"]
    scoring = props["scoring"]["properties"]
    top = st.sampled_from(sorted(props)).flatmap(
        lambda k: st.tuples(st.just((k,)), from_schema(sub_schema(kind, props[k])))
    )
    inner = st.sampled_from(sorted(scoring)).flatmap(
        lambda k: st.tuples(st.just(("scoring", k)), from_schema(sub_schema(kind, scoring[k])))
    )
    return st.one_of(top, inner)


def with_key(doc: dict, key: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    if len(key) == 1:
        doc[key[0]] = value
    else:
        doc.setdefault(key[0], {})[key[1]] = value
    return doc


def outcome(argv: list[str], capsys) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


def assert_refused_or_planned(code: int, err: list[str], path: Path, keys) -> bool:
    """True where the file passed load and the plan check; else it was refused at load as the
    rules say: exit 2, one line, naming the file and one of its keys."""
    if code == 0:
        assert err == [], err
        return True
    assert code == 2 and len(err) == 1, (code, err)
    assert err[0].startswith(f"ocg: error: {path}: "), err
    key = err[0].removeprefix(f"ocg: error: {path}: ").split(":")[0]
    top = key.split(".")[0].split("[")[0].strip("'\"`")
    assert top in keys, err
    return False


def write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_a_schema_valid_file_is_refused_at_load_or_planned(kind, place, capsys, monkeypatch):
    monkeypatch.setenv("OCG_OUTPUTS", str(place / "out"))
    keys = set(SCHEMAS[kind]["properties"])
    command = "report" if kind == "run" else "sweep"
    planned = []

    @SETTINGS
    @given(st.one_of(one_key(kind), from_schema(SCHEMAS[kind]).map(lambda d: ((), d))))
    def check(drawn):
        key, value = drawn
        doc = with_key(base(place), key, value) if key else value
        path = write(place / f"{kind}.yaml", doc)
        code, err = outcome([command, str(path), "--check"], capsys)
        if assert_refused_or_planned(code, err, path, keys):
            planned.append(key)

    check()
    assert len(planned) >= EXAMPLES // 5, planned  # the plan check is reached, not only load
    assert not (place / "out").exists()  # a check writes nothing


def test_a_schema_valid_models_file_is_refused_at_load_or_each_entry_planned(
    place, capsys, monkeypatch
):
    monkeypatch.setenv("OCG_OUTPUTS", str(place / "out"))
    models = SCHEMAS["models"]
    narrowed = copy.deepcopy(models)
    narrowed["properties"].pop("extends")  # another file: its own test (test_models.py)
    listed = []

    @SETTINGS
    @given(from_schema(narrowed))
    def check(doc):
        path = write(place / "models-drawn.yaml", doc)
        code, err = outcome(["models", "--models-file", str(path)], capsys)
        if not assert_refused_or_planned(code, err, path, set(models["properties"])):
            return
        listed.append(doc)
        for name in list(doc.get("models") or {})[:2]:  # each entry in a run: load and plan
            run = dict(base(place), models=[name], models_file=str(path))
            run_path = write(place / "run-drawn.yaml", run)
            code, err = outcome(["report", str(run_path), "--check"], capsys)
            if code != 0:  # refused: the line names the models file's entry
                assert code == 2 and len(err) == 1, (code, err)
                assert f"models.{name}" in err[0] or str(path) in err[0], err

    check()
    assert listed  # some drawn files load, so their entries are planned


@pytest.mark.slow
def test_two_accepted_run_files_run_end_to_end_on_the_replay_backend(place, capsys, monkeypatch):
    """Two files drawn one key at a time and accepted by the check, made small (one set, one
    template, analyses 03 only), run as `ocg report` in a child: each finishes `done`."""
    monkeypatch.setenv("OCG_OUTPUTS", str(place / "out"))
    accepted: list[dict] = []

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(one_key("run"))
    def draw(drawn):
        if len(accepted) >= 2:
            return
        key, value = drawn
        if key[0] in ("outputs", "models_file", "name", "models", "notebooks", "analysis"):
            return  # kept as the base sets them: the run's place and its small plan
        doc = with_key(dict(base(place), analysis=["03_main_results"]), key, value)
        doc.update(subset_k=1, template_ids=[0], name=f"prop{len(accepted)}")
        for k in ("permutations", "samples"):
            if isinstance(doc.get(k), int):
                doc[k] = min(doc[k], 2)
        if doc.get("metrics") is None:
            doc["metrics"] = ["coverage"]
        path = write(place / "e2e.yaml", doc)
        code, _ = outcome(["report", str(path), "--check"], capsys)
        if code == 0:
            accepted.append(doc)

    draw()
    assert len(accepted) == 2
    for doc in accepted:
        path = write(place / f"{doc['name']}.yaml", doc)
        result = subprocess.run(
            [sys.executable, "-m", "ocg.cli", "report", str(path)],
            capture_output=True,
            env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)),
            timeout=900,
        )
        assert result.returncode == 0, (doc, result.stderr[-3000:])
        assert b"\r" not in result.stdout + result.stderr
        state = json.loads((place / "out" / "reports" / doc["name"] / "report.json").read_text())
        assert state["state"] == "done", state


def test_a_missing_models_file_is_named_by_the_run_files_key(place, capsys, monkeypatch):
    """Found by the property test: the error named only the missing path, not the key."""
    monkeypatch.setenv("OCG_OUTPUTS", str(place / "out"))
    path = write(place / "missing.yaml", dict(base(place), models_file="nowhere.yaml"))
    code, err = outcome(["report", str(path), "--check"], capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"ocg: error: {path}: models_file: ") and "nowhere.yaml" in err[0]
    assert "does not exist" in err[0], err


@pytest.mark.parametrize(
    "change, says",
    [
        ({"table7_pairs": {"rp-a": "rp-a"}}, "table7_pairs.rp-a: a model paired with itself"),
        ({"table7_pairs": {"rp\tx": "rp-a"}}, "table7_pairs.'rp\\tx': 'rp\\tx' is not a model"),
        ({"subset_k": 100000}, "subset_k: got 100000; the 4-concept data hold 192 sets"),
    ],
)
def test_what_a_notebook_would_refuse_is_refused_at_load(place, capsys, monkeypatch, change, says):
    """Found by the property test's keys: a self-pair for Table 7, a key with a tab, a subset
    larger than the data (once silently all of it)."""
    monkeypatch.setenv("OCG_OUTPUTS", str(place / "out"))
    path = write(place / "refused.yaml", dict(base(place), **change))
    code, err = outcome(["report", str(path), "--check"], capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"ocg: error: {path}: {says}"), err


def test_build_data_refuses_a_subset_larger_than_the_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path))
    code, err = outcome(["build-data", "--subset-k", "100000"], capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith("ocg: error: subset_k: got 100000")
    assert not (tmp_path / "data").exists()
