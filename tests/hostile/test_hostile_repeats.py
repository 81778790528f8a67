"""A condition, template, metric or model given twice would be generated, scored and stored twice:
refused where it is read (the CLI's flags, a run or sweep file, `generate()`), with one
`ocg: error:` line naming the field and the repeated value, exit 2, nothing written. And Ctrl-C
while the CLI starts prints one line and exits 130."""

import pytest
import yaml

from ocg.core.errors import OcgInputError
from ocg.jobs.pipeline import DEMO_RUN, load_run
from tests.hostile.cases import cli, replay_run, tree


@pytest.mark.parametrize(
    "flag, values, shown",
    [
        ("--templates", [0, 0], "0"),
        ("--conditions", ["ordered", "ordered"], "'ordered'"),
    ],
)
def test_generate_refuses_a_repeated_condition_or_template(tmp_path, capsys, flag, values, shown):
    argv = replay_run(tmp_path)
    at = argv.index(flag)
    argv = [*argv[:at], flag, *values, *argv[at + 2 :]]
    before = tree(tmp_path)
    code, err = cli(capsys, "generate", "m", *argv, "--out", tmp_path / "gen")
    assert code == 2 and f"ocg: error: {flag}: {shown} is given twice" in err, err
    assert tree(tmp_path) == before  # nothing written


def test_score_refuses_a_repeated_metric(tmp_path, capsys):
    code, err = cli(
        capsys, "score", "--generations", tmp_path, "--metrics", "distinct", "coverage", "distinct"
    )
    assert code == 2 and "ocg: error: --metrics: 'distinct' is given twice" in err, err
    assert list(tmp_path.iterdir()) == []


def test_generate_in_python_refuses_repeats_before_any_work(tmp_path):
    from ocg.generation import select_instances

    with pytest.raises(OcgInputError, match=r"^template_ids: 2 is given twice"):
        select_instances(None, ["ordered"], 1, [0, 2, 2])
    with pytest.raises(OcgInputError, match=r"^conditions: 'original' is given twice"):
        select_instances(None, ["original", "ordered", "original"], 1, [0])


@pytest.mark.parametrize(
    "field, value, shown",
    [
        ("conditions", ["ordered", "ordered"], "'ordered'"),
        ("template_ids", [0, 0], "0"),
        ("metrics", ["coverage", "distinct", "coverage"], "'coverage'"),
        ("models", ["smollm2-135m-instruct", "smollm2-135m-instruct"], "'smollm2-135m-instruct'"),
    ],
)
def test_a_run_file_with_a_repeat_is_refused_naming_field_and_value(tmp_path, field, value, shown):
    raw = yaml.safe_load(DEMO_RUN.read_text())
    raw[field] = value
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(OcgInputError) as caught:
        load_run(path)
    assert str(caught.value).startswith(f"{path}: {field}"), caught.value
    assert f"{shown} is given twice" in str(caught.value)


def test_ctrl_c_while_the_cli_starts_is_one_line_and_130(capsys, monkeypatch):
    import ocg.cli
    import ocg.cli.parser

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(ocg.cli.parser, "build_parser", interrupted)
    monkeypatch.setattr(ocg.cli, "build_parser", interrupted)
    code, err = cli(capsys, "models")
    assert code == 130 and "interrupted (Ctrl-C)" in err
    assert err.count("\n") == 1


def test_a_sweep_file_with_a_repeated_template_is_one_error_line_and_writes_nothing(
    tmp_path, capsys
):
    from ocg.core.paths import PARAMS_DIR

    path = tmp_path / "s.yaml"
    path.write_text(
        f"extends: {PARAMS_DIR / 'sweeps' / 'paper.yaml'}\nname: twice\n"
        f"outputs: {tmp_path / 'out'}\ntemplate_ids: [0, 3, 0]\n"
    )
    code, err = cli(capsys, "sweep", path, "--executor", "slurm", "--dry-run")
    assert code == 2 and f"ocg: error: {path}: template_ids" in err and "0 is given twice" in err
    assert not (tmp_path / "out").exists()
