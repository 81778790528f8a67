"""`ocg prefetch --list` on a machine that cannot reach the hub says so once (not one DNS error per
repository, nor "gated ones need HF_TOKEN"); a branch (`main`) is marked as no pin, in the
listing and the run card; only a commit hash pins."""

import yaml

from ocg.cli import main

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def sweep_file(tmp_path) -> str:
    (tmp_path / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "models": {
                    "a": {"id": "ocg-test/a", "quantization": "none"},
                    "b": {"id": "ocg-test/b", "quantization": "none"},
                    "c": {"id": "ocg-test/c", "quantization": "none", "revision": COMMIT},
                }
            }
        )
    )
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "hub",
                "models": ["a", "b", "c"],
                "models_file": str(tmp_path / "models.yaml"),
                "conditions": ["ordered"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "analysis": [],
                "outputs": str(tmp_path / "out"),
                "resources": {"default": {"cpus": 1}},
            }
        )
    )
    return str(path)


def test_an_unreachable_hub_is_said_once(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    import ocg.weights.hub

    def no_listing(*args, **kwargs):
        raise OSError(
            "Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name resolution)"
        )

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(ocg.weights.hub, "hub_reachable", lambda timeout=3.0: False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", no_listing)
    assert main(["prefetch", sweep_file(tmp_path), "--list"]) == 1
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert out.count("cannot be reached") == 2, out  # the listing's first line, and the error
    assert "name resolution" not in out and "HF_TOKEN" not in out
    assert (
        "ocg-test/a@main (model a): not listed; in the local cache: NOT cached [main: a branch, not pinned"
        in out
    )
    c_line = next(line for line in out.splitlines() if line.startswith("ocg-test/c@"))
    assert "not pinned" not in c_line
    assert (
        "3 of 3 repositories could not be listed (the hub (huggingface.co) cannot be reached from here)"
        in out
    )


def test_only_a_commit_hash_pins():
    from ocg.weights.hub import is_pinned, pin_note

    assert (
        is_pinned(COMMIT)
        and not is_pinned("main")
        and not is_pinned("v1.0")
        and not is_pinned(COMMIT[:12])
    )
    assert pin_note("main") == "a branch, not pinned: its commit can move"
    assert pin_note("v1.0") == "a branch or tag, not pinned: its commit can move"


def test_the_run_card_says_whether_the_revision_pins(tmp_path):
    from ocg.config.model_registry import load_models
    from ocg.generation.run_card import card_settings

    class Backend:
        batch_size, sampling = 8, None

        def resolved_revision(self):
            return COMMIT

        def prompt_settings(self):
            return {}

    sweep_file(tmp_path)
    specs = load_models(tmp_path / "models.yaml")
    assert card_settings(specs["a"], Backend(), None).revision_pinned is False
    assert card_settings(specs["c"], Backend(), None).revision_pinned is True
    assert (
        card_settings(load_models()["smollm2-135m-instruct"], Backend(), None).revision_pinned
        is None
    )
