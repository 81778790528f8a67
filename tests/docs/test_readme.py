"""The guides' blocks run as written: the user guide's ad hoc analysis (load, tweak an aggregation,
plot) and the adding-a-model recipe."""

import re

import numpy as np
import pandas as pd

from ocg.core.paths import PROJECT_ROOT
from ocg.scoring import score_model
from tests.helpers import write_generations

USER_GUIDE = PROJECT_ROOT / "docs" / "user-guide.md"
MODEL_GUIDE = PROJECT_ROOT / "docs" / "adding-a-model.md"


def readme_block(heading: str) -> str:
    section = USER_GUIDE.read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_ad_hoc_block_runs_as_written(tmp_path, monkeypatch):
    """From a folder other than the project's, on the demo's own design (its templates and
    conditions, read from params/runs/demo.yaml), the outputs moved by OCG_OUTPUTS."""
    import matplotlib
    import yaml

    matplotlib.use("Agg")
    demo = yaml.safe_load((PROJECT_ROOT / "params" / "runs" / "demo.yaml").read_text())
    answers = [
        "The boy rides a bike down the street.",
        "A bike, a boy and a street.",
        "The boy rode.",
        "On the street the boy rides his bike.",
        "The street boy rides a bike.",
    ]
    for model in demo["models"]:
        rows = [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": answers[(p * (t + 1) + s + (model == demo["models"][1])) % 5],
            }
            for s in range(demo["subset_k"])
            for t in demo["template_ids"]
            for p in range(6)
        ]
        for cond in demo["conditions"]:
            write_generations(
                tmp_path / "gen", model, [dict(r, set_id=f"s{r['set_id']}") for r in rows], cond
            )
        score_model(
            tmp_path / "gen" / model,
            metrics=["coverage"],
            out_dir=tmp_path / "outputs" / "scores",
            progress=False,
        )
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "outputs"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    scope = {}
    exec(compile(readme_block("Notebooks in JupyterLab"), str(USER_GUIDE), "exec"), scope)
    summary, median = scope["summary"], scope["table1_median"]
    assert sorted(summary.template_id.unique()) == demo["template_ids"]
    # the tweaks are what they say: the median over templates of each model's per-template value
    s = summary[summary.condition == "ordered"]
    expected = s.groupby("model").coverage_w_order.median()
    got = median[median.metric == "coverage_w_order"].set_index("model").value
    assert np.allclose(got.sort_index(), expected.sort_index())
    assert not np.allclose(
        got.sort_index(), s.groupby("model").coverage_w_order.mean().sort_index()
    )
    orate = (
        median[median.metric == "ordered_rate"].set_index("model").value
    )  # pooled, whatever `over` is
    pooled = s.groupby("model")[["n_in_order", "n_all_present"]].sum()
    assert np.allclose(orate.sort_index(), 100 * pooled.n_in_order / pooled.n_all_present)
    two = scope["table1_02"]
    s02 = s[s.template_id.isin([0, 2])]
    got = two[two.metric == "coverage_w_order"].set_index("model").value
    assert np.allclose(got.sort_index(), s02.groupby("model").coverage_w_order.mean().sort_index())
    assert len(scope["ax"].get_lines()) == 2
    assert isinstance(scope["table1"], pd.DataFrame)


def test_load_scores_names_the_folder_it_searched(tmp_path, monkeypatch):
    """A relative folder is the working directory's; the refusal names it, and where the
    outputs' scores are when they hold some."""
    import pytest

    from ocg.core.errors import OcgInputError
    from ocg.results.scores import load_scores

    write_generations(
        tmp_path / "gen",
        "a",
        [
            {
                "set_id": "s0",
                "template_id": 0,
                "perm_index": 0,
                "concepts": ["boy", "ride", "bike", "street"],
                "answer": "The boy rides a bike down the street.",
            }
        ],
    )
    score_model(
        tmp_path / "gen" / "a",
        metrics=["coverage"],
        out_dir=tmp_path / "outputs" / "scores",
        progress=False,
    )
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "outputs"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(OcgInputError) as err:
        load_scores("outputs/scores")
    message = str(err.value)
    assert str(tmp_path / "elsewhere" / "outputs" / "scores") in message
    assert f"{tmp_path / 'outputs' / 'scores'}: load_scores() reads them" in message
    assert list(load_scores().summary.model.unique()) == ["a"]


def recipe_blocks() -> list[tuple[str, str]]:
    section = MODEL_GUIDE.read_text().split("## Add a model to a run and its report\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"```(yaml|bash)\n(.*?)```", section, re.S)


def test_the_add_a_model_recipe_is_three_steps_that_check_out(tmp_path, capsys):
    """The recipe's files as written: the models file extends the shipped one, its model runs
    in full bf16 weights (the run card's settings, not only the entry's dtype: an entry silent
    on quantization would be the paper's 4bit), the run file names all three models and passes the
    run-file checks, the command is `ocg report`."""
    import shlex
    import shutil

    import yaml

    from ocg.cli import build_parser, main
    from ocg.config.model_registry import load_models
    from ocg.generation.backends import make_backend
    from ocg.generation.backends.batch_auto import BatchSize
    from ocg.generation.run_card import card_settings
    from ocg.jobs.run_checks import check_run

    blocks = recipe_blocks()
    assert [kind for kind, _ in blocks] == ["yaml", "yaml", "bash"]
    (tmp_path / "params").mkdir()
    shutil.copy(PROJECT_ROOT / "params" / "models.yaml", tmp_path / "params" / "models.yaml")
    (tmp_path / "my_models.yaml").write_text(blocks[0][1])
    (tmp_path / "my_run.yaml").write_text(blocks[1][1])
    specs = load_models(tmp_path / "my_models.yaml")
    shipped = load_models()
    assert set(specs) == set(shipped) | {"smollm2-bf16"}
    assert specs["smollm2-135m-instruct"] == shipped["smollm2-135m-instruct"]
    card = card_settings(
        specs["smollm2-bf16"], make_backend(specs["smollm2-bf16"], BatchSize(32)), None
    )
    demo_card = card_settings(
        shipped["smollm2-135m-instruct"],
        make_backend(shipped["smollm2-135m-instruct"], BatchSize(32)),
        None,
    )
    assert (card.quantization, card.dtype) == ("none", "bfloat16")
    assert {k: v for k, v in card.to_json().items() if k != "dtype"} == {
        k: v for k, v in demo_card.to_json().items() if k != "dtype"
    }
    assert main(["models", "--models-file", str(tmp_path / "my_models.yaml")]) == 0
    listed = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert listed["name"][:6] == ["name", "backend", "quantization", "dtype", "max_tokens", "batch"]
    assert listed["smollm2-bf16"][1:6] == [
        "transformers",
        "none",
        "bfloat16",
        "32",
        str(shipped["smollm2-135m-instruct"].batch_size),
    ]
    assert listed["smollm2-135m-instruct-4bit"][2:4] == ["4bit", "float32"]
    run = check_run(yaml.safe_load(blocks[1][1]), tmp_path / "my_run.yaml")
    assert run.file.models_file == str(tmp_path / "my_models.yaml")
    demo = check_run(
        yaml.safe_load((PROJECT_ROOT / "params" / "runs" / "demo.yaml").read_text()),
        PROJECT_ROOT / "params" / "runs" / "demo.yaml",
    )
    for key in ("n_concepts", "subset_k", "template_ids", "conditions", "scoring"):
        # the demo's design: its models resume with nothing to do
        assert getattr(run.file, key) == getattr(demo.file, key), key
    assert run.file.models == demo.file.models + ["smollm2-bf16"]
    argv = shlex.split(blocks[2][1].strip())
    assert (
        argv[0] == ".venv/bin/ocg"
        and str(build_parser().parse_args(argv[1:]).run_file) == "my_run.yaml"
    )
