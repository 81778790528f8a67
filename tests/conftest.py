import os

import pytest

from ocg.core.paths import PROJECT_ROOT

# The converted embedded model is a cache shared by all tests (converting takes ~25 s): the user's
# (OCG_MODEL_CACHE, else outputs/models), read as it is. Everything else a test reads or writes lies
# under an outputs folder of its own (OCG_OUTPUTS, below), never the user's outputs/: a `make test`
# after `make demo` sees none of the demo's scores, reports or generations.
os.environ.setdefault("OCG_MODEL_CACHE", str(PROJECT_ROOT / "outputs" / "models"))


@pytest.fixture(scope="session", autouse=True)
def _session_outputs(tmp_path_factory):
    """OCG_OUTPUTS for what runs before a test's own (session- and module-scoped fixtures)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCG_OUTPUTS", str(tmp_path_factory.mktemp("session-outputs")))
        yield


@pytest.fixture(autouse=True)
def outputs(tmp_path, monkeypatch):
    """Each test's own outputs/ root (OCG_OUTPUTS, not created until written), so no test reads or
    writes the user's; a test that asks for it by name gets its path."""
    root = tmp_path / "outputs"
    monkeypatch.setenv("OCG_OUTPUTS", str(root))
    return root


@pytest.fixture(scope="session")
def scored_run(tmp_path_factory):
    """The scored run most tests read, built by one factory: scored_run(name, rows, metrics, models,
    conditions, **settings) writes each model's records in each condition (rows: a list, or a
    function of model and condition giving one; see helpers.write_generations) under <root>/gen,
    scores each model with score_model(metrics, **settings) under <root>/scores and returns <root>,
    a fresh folder per call. Session-scoped so that module-scoped fixtures build once per module;
    a test that changes a build copies it first (shutil.copytree), as others may read it."""
    from ocg.scoring import score_model
    from tests.helpers import scoring_with, write_generations

    def build(name, rows, metrics, models=("m",), conditions=("ordered",), **settings):
        root = tmp_path_factory.mktemp(name)
        for model in models:
            for condition in conditions:
                write_generations(
                    root / "gen",
                    model,
                    rows(model, condition) if callable(rows) else rows,
                    condition,
                )
            score_model(
                root / "gen" / model,
                metrics=metrics,
                out_dir=root / "scores",
                progress=False,
                scoring=scoring_with(**settings),
            )
        return root

    return build


# `make test` runs the tests in two processes (pytest-xdist, `--dist loadgroup`); every throwaway Slurm
# cluster (tests/slurm_cluster.py) binds Slurm's default ports, so the tests that start one share a process.
CLUSTER_FIXTURES = {"slurm", "site_slurm"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("slurm-cluster"))


# The second stack's job (`make test-tf4`) sets OCG_EXPECT_TRANSFORMERS=4: the session refuses to
# start on another transformers major, and a skipped test fails the job (a skip there would hide
# a path that does not work on transformers 4, e.g. lmppl's half of the perplexity tests).
def pytest_sessionstart(session):
    expected = os.environ.get("OCG_EXPECT_TRANSFORMERS")
    if expected:
        from importlib import metadata

        running = metadata.version("transformers")
        if running.split(".")[0] != expected:
            raise pytest.UsageError(
                f"OCG_EXPECT_TRANSFORMERS={expected}, but transformers {running} is installed"
            )


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get("OCG_EXPECT_TRANSFORMERS") and reporter and reporter.stats.get("skipped"):
        reporter.write_line(
            f"OCG_EXPECT_TRANSFORMERS is set: {len(reporter.stats['skipped'])} skipped "
            "test(s) fail this job",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
