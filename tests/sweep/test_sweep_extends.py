"""Sweep files extend one another (`extends:`), as models files do: the shipped Table 4 sweep is
paper.yaml with three keys changed, and a bad chain is refused with the file and field named."""

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.paths import PARAMS_DIR
from ocg.sweep.config import load_sweep

BASE = """name: base
models: [smollm2-135m-instruct, smollm2-135m-instruct-4bit]
conditions: [original, ordered]
outputs: outputs/sweeps/base
resources:
  default: {gpus: 1, cpus: 8, mem: 64G, time: "12:00:00"}
  models:
    smollm2-135m-instruct: {mem: 16G}
slurm: {partition: gpu, throttle: 4}
"""


def test_the_table4_sweep_is_paper_with_its_own_conditions_and_analysis():
    paper, table4 = (
        load_sweep(PARAMS_DIR / "sweeps" / "paper.yaml"),
        load_sweep(PARAMS_DIR / "sweeps" / "paper-table4.yaml"),
    )
    assert table4.file.name == "paper-table4" and table4.file.conditions == [
        "ordered",
        "ordered_one_shot",
    ]
    assert table4.file.analysis == ["06_priming"]
    same = set(type(paper.file).model_fields) - {"name", "conditions", "analysis"}
    assert {k: getattr(table4.file, k) for k in same} == {k: getattr(paper.file, k) for k in same}
    assert table4.entries == paper.entries and len(table4.file.models) == 36


def test_an_extending_file_replaces_keys_and_adds_to_resources_and_slurm(tmp_path):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "child.yaml").write_text(
        "extends: ../base.yaml\nname: child\nconditions: [ordered]\n"
        "resources:\n  models:\n    smollm2-135m-instruct-4bit: {time: '01:00:00'}\nslurm: {throttle: 2}\n"
    )
    child = load_sweep(tmp_path / "sub" / "child.yaml").file
    assert child.conditions == ["ordered"] and child.outputs.endswith("outputs/sweeps/base")
    assert child.resources.default.mem == "64G"  # kept from the base
    assert {m: r.recorded() for m, r in child.resources.models.items()} == {
        "smollm2-135m-instruct": {"gpus": 0, "cpus": 1, "mem": "16G", "time": "01:00:00"},
        "smollm2-135m-instruct-4bit": {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"},
    }  # each model's block kept or added, key by key
    assert child.slurm.partition == "gpu" and child.slurm.throttle == 2


def test_an_extending_files_resources_add_to_the_bases_key_by_key(tmp_path):
    """A child that changes only the default's time keeps the base's GPUs, CPUs and memory (it
    replaced resources.default whole before), and a model's block adds to the base's."""
    from ocg.sweep import resources_for

    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "child.yaml").write_text(
        "extends: base.yaml\nname: child\nresources:\n  default: {time: '02:00:00'}\n"
        "  models:\n    smollm2-135m-instruct: {cpus: 2}\n"
        "slurm: {analysis: {mem: 2G}}\n"
    )
    child = load_sweep(tmp_path / "child.yaml")
    assert resources_for(child, "smollm2-135m-instruct-4bit").recorded() == {
        "gpus": 1,
        "cpus": 8,
        "mem": "64G",
        "time": "02:00:00",
    }
    assert resources_for(child, "smollm2-135m-instruct").recorded() == {
        "gpus": 1,
        "cpus": 2,
        "mem": "16G",
        "time": "02:00:00",
    }
    assert child.file.slurm.partition == "gpu" and child.file.slurm.analysis.mem == "2G"


@pytest.mark.parametrize(
    "child, field, message",
    [
        ("extends: base.yaml\nconditions: [ordered]\n", "name", "a name of its own"),
        ("extends: nowhere.yaml\nname: c\n", "extends", "no such sweep file"),
        ("extends: child.yaml\nname: c\n", "extends", "a circle"),
        ("extends: 3\nname: c\n", "extends", "expected the path of another sweep file"),
    ],
)
def test_a_bad_extends_is_refused_naming_the_file_and_field(tmp_path, child, field, message):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "child.yaml").write_text(child)
    with pytest.raises(OcgInputError, match=message) as err:
        load_sweep(tmp_path / "child.yaml")
    assert str(err.value).startswith(f"{tmp_path / 'child.yaml'}: {field}")


def test_a_long_chain_is_refused_not_a_recursion_error(tmp_path):
    (tmp_path / "s0.yaml").write_text(BASE)
    for i in range(1, 60):
        (tmp_path / f"s{i}.yaml").write_text(f"extends: s{i - 1}.yaml\nname: s{i}\n")
    with pytest.raises(OcgInputError, match="more than 50 sweep files in one chain"):
        load_sweep(tmp_path / "s59.yaml")


def test_the_paper_sweep_extended_with_one_gpu_keeps_its_cpus_memory_and_time(tmp_path):
    """`extends: paper.yaml` with `resources: {default: {gpus: 1}}`: the dry run's sbatch lines keep
    the paper's 8 CPUs, 64G and 12 hours for the default tasks (not Resources' own defaults)."""
    from tests.sweep.sweep_files import ocg

    (tmp_path / "gpu.yaml").write_text(
        f"extends: {PARAMS_DIR / 'sweeps' / 'paper.yaml'}\nname: paper-gpu\n"
        f"outputs: {tmp_path / 'out'}\nresources: {{default: {{gpus: 1}}}}\n"
    )
    result = ocg("sweep", str(tmp_path / "gpu.yaml"), "--executor", "slurm", "--dry-run")
    assert result.returncode == 0, result.stderr
    arrays = [line for line in result.stdout.splitlines() if "--array=" in line]
    default = next(line for line in arrays if "--array=0," in line)  # llama3.2-1b's, the default
    assert "--cpus-per-task=8 --mem=64G --time=12:00:00 --gres=gpu:1" in default
    assert not any("--cpus-per-task=1 " in line or "--mem=4G" in line for line in arrays)
