"""The inspect_ai task on mockllm: ocg's prompts, ocg's verdicts per sample, ocg's pooled rates;
and its log read back by `ocg import`, refused where its prompts are not ocg's or some are missing."""

import json
from importlib.metadata import entry_points

import pandas as pd
import pytest

from ocg.cli import main
from ocg.generation import read_generations
from ocg.harness.asked import messages_of, messages_sha256, select
from ocg.harness.verdicts import CHECKS, pooled_rates
from ocg.metrics.listcopy import flag_texts

from .conftest import SMALL, run_inspect


def test_the_entry_point_registers_the_task():
    (ep,) = [e for e in entry_points(group="inspect_ai") if e.name == "ocg"]
    assert ep.load().ordered_commongen.__name__ == "ordered_commongen"


def test_samples_are_ocgs_prompts_and_scores_ocgs_checks(inspect_log):
    rows = {r["instance_id"]: r for r in select(SMALL).to_dict("records")}
    assert sorted(s.id for s in inspect_log.samples) == sorted(rows)
    for s in inspect_log.samples:
        sent = [{"role": m.role, "content": m.text} for m in s.input]
        assert messages_sha256(sent) == messages_sha256(messages_of(rows[s.id]))
    samples = sorted(inspect_log.samples, key=lambda s: s.id)
    answers = pd.Series([s.output.completion for s in samples])
    ocg = flag_texts(  # ocg's own checks, as notebook 01 calls them
        answers,
        pd.Series([list(rows[s.id]["concepts"]) for s in samples]),
        pd.Series([rows[s.id]["pos_pattern"] for s in samples]),
    )
    scored = pd.DataFrame([next(iter(s.scores.values())).value for s in samples])
    assert scored[list(CHECKS)].astype(bool).equals(ocg[list(CHECKS)].astype(bool))
    assert 0 < scored["in_order"].sum() < len(scored)  # the mock answers vary
    metrics = {k: v.value for k, v in inspect_log.results.scores[0].metrics.items()}
    assert metrics == pytest.approx(pooled_rates(ocg.to_dict("records")), nan_ok=True)


def _imported(tmp_path, log_path, name="mock"):
    assert main(["import", str(log_path), "--name", name]) == 0
    return read_generations(tmp_path / "outputs" / "generations" / name)


def test_import_writes_the_answers_with_provenance(inspect_log, tmp_path, capsys):
    store = _imported(tmp_path, inspect_log.location)
    by_id = {s.id: s.output.completion for s in inspect_log.samples}
    assert dict(zip(store.instance_id, store.raw)) == by_id
    rows = {r["instance_id"]: r for r in select(SMALL).to_dict("records")}
    assert all(
        h == messages_sha256(messages_of(rows[i]))
        for i, h in zip(store.instance_id, store.prompt_sha256)
    )
    harness = json.loads(
        (tmp_path / "outputs" / "generations" / "mock" / "harness.json").read_text()
    )
    assert harness["harness"] == "inspect_ai" and harness["model"] == "mockllm/model"
    assert harness["harness_version"] and "max_tokens" in harness["generation_config"]
    assert "ocg report" in capsys.readouterr().out


def _rewritten(inspect_log, tmp_path, change):
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(inspect_log.location, resolve_attachments=True)
    change(log)
    path = tmp_path / "changed.eval"
    write_eval_log(log, str(path))
    return path


def test_a_prompt_not_ocgs_is_refused_naming_the_sample(inspect_log, tmp_path, capsys):
    def edit(log):
        log.samples[1].input[-1].content = "Concepts: a b c d\n\nWrite anything."

    path = _rewritten(inspect_log, tmp_path, edit)
    assert main(["import", str(path), "--name", "mock"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"ocg: error: {path}: sample ")
    assert "not ocg's" in err[0]


def test_a_log_missing_instances_is_refused(inspect_log, tmp_path, capsys):
    path = _rewritten(inspect_log, tmp_path, lambda log: log.samples.pop())
    assert main(["import", str(path), "--name", "mock"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"ocg: error: {path}: misses 1 of the 4 answers")
    assert not (tmp_path / "outputs" / "generations" / "mock").exists()


def test_epochs_are_samples(tmp_path):
    log = run_inspect(tmp_path / "logs", subset=1, permutations=1, templates="0")
    assert len(log.samples) == 2
    store = _imported(tmp_path, log.location)
    assert list(store.get("sample", pd.Series([0] * len(store)))) == [0, 0]
