"""Links ocg did not make, where generation, scoring and reports write: each refused naming the link, or at worst stopped, with the link's target byte-for-byte
untouched, including a link that appears while the command runs."""

import sys

import pytest
import yaml

from ocg.cli import main
from tests.hostile.cases import cli, replay_run, tree, victim


def spoilable_victim(tmp_path):
    """victim(), with a one-line file without a newline: a store's "torn tail", cut before appending."""
    target, _ = victim(tmp_path)
    (target / "token").write_bytes(b"one line, no newline")
    return target, tree(target)


@pytest.mark.parametrize("link", ["m/ordered.jsonl", "m", "m/run_card.json"])
def test_generate_refuses_a_link_where_it_appends_or_writes(tmp_path, capsys, link):
    target, before = spoilable_victim(tmp_path)
    gen = tmp_path / "gen"
    gen.mkdir()
    if link != "m":
        (gen / "m").mkdir()
    (gen / link).symlink_to(target if link == "m" else target / "token")
    code, err = cli(capsys, "generate", "m", "--out", gen, *replay_run(tmp_path))
    assert code == 2 and f"ocg: error: {gen / link}: a symbolic link (to " in err, err
    assert tree(target) == before
    assert (gen / link).is_symlink()


def test_a_server_log_that_is_a_link_is_not_written_through(tmp_path, capsys):
    from ocg.generation.servers.server import free_port

    target, before = spoilable_victim(tmp_path)
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
                            "server": {"command": f"{sys.executable} -c 'print(1)'", "port": port},
                        },
                    }
                }
            }
        )
    )
    (tmp_path / "gen" / "m").mkdir(parents=True)
    (tmp_path / "gen" / "m" / "server.log").symlink_to(target / "token")
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
    assert code == 2 and f"{tmp_path / 'gen' / 'm' / 'server.log'}: a symbolic link" in err, err
    assert tree(target) == before


def test_a_store_that_becomes_a_link_is_never_written_through(tmp_path, monkeypatch):
    """The check and the write are not one step: the write itself does not follow a link."""
    from ocg.core.errors import OcgInputError
    from ocg.generation import GenerationStore

    target, before = spoilable_victim(tmp_path)
    path = tmp_path / "gen" / "m" / "ordered.jsonl"
    path.parent.mkdir(parents=True)
    store = GenerationStore(path)
    path.symlink_to(target / "token")  # after the store was opened (and checked)
    with pytest.raises(OSError) as caught:
        store.append([{"instance_id": "x", "sample": 0}])
    assert caught.value.filename == str(path)
    with pytest.raises(OSError):
        store.prepare_for_append()  # the target's "torn tail" is never cut
    path.unlink()
    swap_for_link(path.parent, target)  # the model's folder, mid-run
    with pytest.raises(OcgInputError, match="a symbolic link"):
        store.append([{"instance_id": "x", "sample": 0}])
    assert tree(target) == before


def swap_for_link(folder, target):
    """What a hostile user sharing the outputs does between ocg's check and its use: the folder
    moved aside and a link to someone's files put in its place."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target)


def test_a_staging_folder_swapped_for_a_link_after_the_check_is_not_cleared_through(
    tmp_path, monkeypatch
):
    from contextlib import contextmanager

    import ocg.jobs.staging as staging_module
    from ocg.core.errors import OcgInputError

    target, before = victim(tmp_path)
    final = tmp_path / "reports" / "demo"
    staging = staging_module.staging_dir(final)
    real_exclusive = staging_module.exclusive

    @contextmanager
    def exclusive_then_swap(directory, doing):
        with real_exclusive(directory, doing=doing):
            swap_for_link(staging, target)
            yield

    monkeypatch.setattr(staging_module, "exclusive", exclusive_then_swap)
    with pytest.raises(OcgInputError, match="a symbolic link"):
        with staging_module.building(final):
            pytest.fail("built into a link")
    assert tree(target) == before


def test_a_scores_folder_swapped_for_a_link_while_scoring_is_not_written_into(
    tmp_path, capsys, monkeypatch
):
    """Scoring takes minutes between the folder's check and its tables' writing."""
    import ocg.scoring.run as score_run
    from tests.helpers import write_generations

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
    folder, real_write = tmp_path / "scores" / "m", score_run.write_score_set

    def swap_then_write(*args, **kwargs):
        swap_for_link(folder, target)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(score_run, "write_score_set", swap_then_write)
    code, err = cli(
        capsys,
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
    )
    assert code == 2 and f"ocg: error: {folder}: a symbolic link" in err, err
    assert tree(target) == before


def test_a_repair_backup_linked_after_the_check_is_not_written_through(
    tmp_path, capsys, monkeypatch
):
    import ocg.generation.answer_store.store as store_module
    from tests.helpers import write_generations

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
    store.write_bytes(store.read_bytes() * 2)
    backup, real_refuse = store.with_name("ordered.jsonl.bak"), store_module.refuse_link

    def refuse_then_link(*paths, **kwargs):
        real_refuse(*paths, **kwargs)
        backup.symlink_to(target / "thesis.tex")

    monkeypatch.setattr(store_module, "refuse_link", refuse_then_link)
    assert main(["repair", str(tmp_path / "gen" / "m")]) == 0
    assert tree(target) == before
    assert not backup.is_symlink() and backup.read_bytes().count(b"\n") == 2


def test_run_notebook_refuses_an_executed_copy_that_is_a_link(tmp_path, capsys, monkeypatch):
    """papermill writes the executed copy by its name, after every cell: never through a link."""
    from ocg.jobs.notebook_runner import find_notebook

    target, before = victim(tmp_path)
    source = find_notebook("03_main_results")
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / source.name).symlink_to(target / "thesis.tex")

    def writes_like_papermill(src, out, **kwargs):
        with open(out, "w") as fh:
            fh.write(open(src).read())
        raise OSError("stop here: the copy was written")

    monkeypatch.setattr("papermill.execute_notebook", writes_like_papermill)
    code, err = cli(capsys, "run-notebook", source.stem, "--out", tmp_path / "nb")
    assert code == 2 and f"ocg: error: {tmp_path / 'nb' / source.name}: a symbolic link" in err, err
    assert tree(target) == before


def test_a_killed_runs_staging_is_cleared_without_following_links_inside(tmp_path):
    """What a killed run left: files, nested folders, and links in them (removed, not followed)."""
    from ocg.jobs.staging import building

    target, before = victim(tmp_path)
    staging = tmp_path / "reports" / "demo.building~"
    (staging / "tables" / "deep").mkdir(parents=True)
    (staging / "tables" / "deep" / "t.csv").write_text("a\n")
    (staging / "index.html").write_text("old\n")
    (staging / "tables" / "to_victim").symlink_to(target)
    (staging / "to_file").symlink_to(target / "thesis.tex")
    with building(tmp_path / "reports" / "demo") as folder:
        assert sorted(p.name for p in folder.iterdir()) == [".lock", "index.html", "report.json"]
    assert tree(target) == before
