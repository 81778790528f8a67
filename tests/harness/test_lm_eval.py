"""The lm-eval task folder: ocg's instances as its documents, ocg's checks in process_results,
ocg's pooled rates as its metrics; its samples file read back by `ocg import`."""

import json
import subprocess
import sys

import pytest

from ocg.cli import main
from ocg.generation import read_generations
from ocg.harness.asked import messages_of, messages_sha256, select
from ocg.harness.lm_eval_task import TASK_FOLDER, lm_eval_hooks
from ocg.harness.verdicts import RATES, pooled_rates, verdicts

from .conftest import SMALL, mock_answer

pytest.importorskip("lm_eval")


def test_the_path_command_prints_the_task_folder(capsys):
    assert main(["lm-eval-path"]) == 0
    folder = capsys.readouterr().out.strip()
    assert folder == str(TASK_FOLDER) and (TASK_FOLDER / "ordered_commongen.yaml").is_file()


def test_documents_are_ocgs_instances_and_one_shot_is_refused():
    docs = lm_eval_hooks.docs(**SMALL.as_params(), version=1.0, pretrained="x")
    rows = select(SMALL).to_dict("records")
    assert [d["instance_id"] for d in docs] == [r["instance_id"] for r in rows]
    for d, r in zip(docs, rows):
        sent = [{"role": "system", "content": d["system"]}, {"role": "user", "content": d["user"]}]
        assert messages_sha256(sent) == messages_sha256(messages_of(r)) == d["prompt_sha256"]
    with pytest.raises(Exception, match="one system and one user turn"):
        lm_eval_hooks.docs(conditions="ordered_one_shot", subset=1)


def test_process_results_and_aggregation_are_ocgs_checks_and_rates():
    docs = lm_eval_hooks.docs(**SMALL.as_params())
    answers = [mock_answer(d["user"]) for d in docs]
    per_doc = [lm_eval_hooks.process_results(d, [a]) for d, a in zip(docs, answers)]
    ocg = verdicts(answers, [d["concepts"] for d in docs], [d["pos_pattern"] for d in docs])
    assert [p["coverage_w_order"]["in_order"] for p in per_doc] == list(ocg["in_order"].astype(int))
    rates = pooled_rates(ocg.to_dict("records"))
    for name in RATES:
        assert getattr(lm_eval_hooks, name)([p[name] for p in per_doc]) == pytest.approx(
            rates[name], nan_ok=True
        )


def samples_file(tmp_path, docs, answers, edit=None):
    """A `--log_samples` file as lm-eval 0.4.13 writes it (the fields ocg reads)."""
    path = tmp_path / "samples_ordered_commongen_2026-01-01T00-00-00.000000.jsonl"
    lines = []
    for i, (d, a) in enumerate(zip(docs, answers)):
        sent = f"<|im_start|>system\n{d['system']}<|im_end|>\n<|im_start|>user\n{d['user']}<|im_end|>\n"
        record = {
            "doc_id": i,
            "doc": dict(d),
            "arguments": {"gen_args_0": {"arg_0": sent}},
            "resps": [[a]],
        }
        lines.append(json.dumps(edit(i, record) if edit else record))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_samples_file_is_imported_and_checked(tmp_path, capsys):
    docs = lm_eval_hooks.docs(**SMALL.as_params())
    answers = [mock_answer(d["user"]) for d in docs]
    assert main(["import", str(samples_file(tmp_path, docs, answers)), "--name", "lm"]) == 0
    store = read_generations(tmp_path / "outputs" / "generations" / "lm")
    assert dict(zip(store.instance_id, store.raw)) == {
        d["instance_id"]: a for d, a in zip(docs, answers)
    }

    def other_prompt(i, record):
        if i == 2:
            record["doc"]["user"] = record["doc"]["user"].replace("Concepts", "Words")
            record["arguments"]["gen_args_0"]["arg_0"] += record["doc"]["user"]
        return record

    bad = samples_file(tmp_path, docs, answers, other_prompt)
    capsys.readouterr()
    assert main(["import", str(bad), "--name", "lm2"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"ocg: error: {bad}:3: the prompt sent") and "not ocg's" in line
    short = samples_file(tmp_path, docs[:3], answers[:3])  # as --limit 3 leaves it
    assert main(["import", str(short), "--name", "lm3"]) == 2
    assert "misses 1 of the 4 answers" in capsys.readouterr().err


@pytest.mark.slow
def test_lm_eval_hf_on_the_embedded_model_gives_ocgs_rates(tmp_path):
    """lm_eval's own command line, the `hf` model on the embedded folder, --limit 2."""
    from ocg.weights.embedded import ensure_converted

    folder = ensure_converted("smollm2-135m-instruct")
    out = tmp_path / "lm-eval"
    subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args",
         f"pretrained={folder},dtype=float32", "--include_path", str(TASK_FOLDER),
         "--tasks", "ordered_commongen", "--apply_chat_template", "--metadata",
         json.dumps(SMALL.as_params()), "--limit", "2", "--log_samples", "--output_path",
         str(out), "--device", "cpu", "--gen_kwargs", "max_gen_toks=32"],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    (samples,) = out.rglob("samples_ordered_commongen_*.jsonl")
    (results,) = out.rglob("results_*.json")
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    assert len(records) == 2
    ocg = verdicts(
        [r["resps"][0][0] for r in records],
        [r["doc"]["concepts"] for r in records],
        [r["doc"]["pos_pattern"] for r in records],
    )
    got = json.loads(results.read_text())["results"]["ordered_commongen"]
    want = pooled_rates(ocg.to_dict("records"))
    for name in RATES:
        assert got[f"{name},none"] == pytest.approx(want[name], nan_ok=True), name
