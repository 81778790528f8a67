"""One request object per step crosses the notebook door (ocg/config/requests.py): built once from
the checked run, written as JSON, rebuilt by the notebook equal to what was written, recording
the same entry and scoring settings."""

import json
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ocg.config.model_registry import get_model, load_models
from ocg.config.requests import (
    GenerateRequest,
    ScoringRequest,
    read_request,
    request_json,
    write_request,
)
from ocg.config.run_file import Sampling
from ocg.core.paths import PARAMS_DIR
from ocg.jobs.pipeline import load_run
from ocg.jobs.plan import GENERATE, SCORE, Dirs, notebook_params
from ocg.jobs.run_checks import check_run
from ocg.scoring import load_scoring_config, score_all
from tests.helpers import write_generations

MODELS_FILES = ["models.yaml", "judge-models.yaml", "reference-models.yaml"]


def test_every_shipped_entry_crosses_the_door_as_it_is_recorded(tmp_path):
    for name in MODELS_FILES:
        for model, entry in load_models(PARAMS_DIR / name).items():
            request = GenerateRequest(model=entry, conditions=["original"])
            back = read_request(GenerateRequest, write_request(request, tmp_path / "r.json"))
            assert back == request, (name, model)
            # the run card's spec, byte for byte (an int given for a float stays an int)
            assert json.dumps(back.model.recorded()) == json.dumps(entry.recorded()), model


def test_every_shipped_run_plans_requests_that_cross_the_door(tmp_path):
    for path in sorted((PARAMS_DIR / "runs").glob("*.yaml")):
        run = load_run(path)
        dirs = Dirs(tmp_path / "g", tmp_path / "s", tmp_path / "r")
        score = notebook_params(SCORE, run, dirs, list(run.file.models))
        back = read_request(ScoringRequest, write_request(score, tmp_path / "s.json"))
        assert back == score and back.scoring is not run.scoring
        # the signature's `config`, byte for byte: only what the file and the run set
        assert json.dumps(back.scoring.recorded()) == json.dumps(run.scoring.recorded()), path
        for model in run.file.models:
            generate = notebook_params(GENERATE, run, dirs, [model])
            assert generate.model is run.entries[model]  # the checked entry, never re-read
            again = read_request(GenerateRequest, write_request(generate, tmp_path / "g.json"))
            assert again == generate, (path, model)


ENTRY = get_model("smollm2-135m-instruct")
SCORING = load_scoring_config()
names = st.text("abcdefgh_", min_size=1, max_size=6)
maybe_dir = st.none() | names.map(lambda n: f"/tmp/{n}")


@settings(max_examples=60, deadline=None)
@given(
    conditions=st.lists(names, min_size=1, max_size=3),
    subset_k=st.none() | st.integers(1, 200),
    permutations=st.none() | st.integers(1, 120),
    template_ids=st.none() | st.lists(st.integers(0, 5), max_size=6),
    generations_dir=maybe_dir,
    dataset=maybe_dir,
    batch_size=st.none() | st.integers(1, 64),
    sampling=st.none()
    | st.builds(
        Sampling,
        temperature=st.integers(1, 3) | st.floats(0.01, 2.0),
        top_p=st.floats(0.01, 1.0),
    ),
    batch_check=st.none() | st.integers(0, 20),
    progress=st.booleans(),
)
def test_a_generate_request_rebuilt_from_its_json_is_equal(**fields):
    request = GenerateRequest(model=ENTRY, **fields)
    back = GenerateRequest.model_validate_json(request_json(request))
    assert back == request and back.model.recorded() == ENTRY.recorded()


@settings(max_examples=60, deadline=None)
@given(
    changes=st.fixed_dictionaries(
        {},
        optional={
            "spacy_batch_size": st.integers(1, 500),
            "perplexity_fallback": st.none() | st.just("embedded:smollm2-135m-instruct"),
            "metrics": st.lists(
                st.sampled_from(["coverage", "pbleu", "distinct"]), min_size=1, unique=True
            ),
        },
    ),
    metrics=st.lists(st.sampled_from(["coverage", "pbleu", "distinct", "diverse"]), min_size=1),
    models=st.none() | st.lists(names, max_size=3),
    folder=maybe_dir,
    redo=st.booleans(),
)
def test_a_scoring_request_rebuilt_from_its_json_is_equal(changes, metrics, models, folder, redo):
    scoring = load_scoring_config(overrides=changes) if changes else SCORING
    request = ScoringRequest(
        scoring=scoring, metrics=metrics, models=models, scores_dir=folder, redo=redo
    )
    back = ScoringRequest.model_validate_json(request_json(request))
    assert back == request and back.scoring.recorded() == scoring.recorded()


def test_a_run_files_scoring_metrics_reach_notebook_02s_call_once(tmp_path):
    """A run file's `scoring: {metrics: [...]}` once crashed notebook 02 ("score_all() got multiple
    values for keyword argument 'metrics'"): the request carries the metrics once."""
    run_file = tmp_path / "run.yaml"
    run_file.write_text(
        json.dumps(
            {
                "name": "t",
                "models": ["smollm2-135m-instruct"],
                "conditions": ["ordered"],
                "scoring": {"metrics": ["coverage"]},
            }
        )
    )
    run = check_run(json.loads(run_file.read_text()), run_file)
    rows = [
        {"set_id": "s", "template_id": 0, "perm_index": p, "concepts": ["dog", "run"], "answer": a}
        for p, a in enumerate(["The dog runs.", "A dog ran home."])
    ]
    write_generations(tmp_path / "gen", "smollm2-135m-instruct", rows)
    dirs = Dirs(tmp_path / "gen", tmp_path / "scores", tmp_path / "r")
    request = notebook_params(SCORE, run, dirs, list(run.file.models))
    assert request.metrics == ["coverage"] and request.scoring.metrics == ["coverage"]
    # what notebook 02 does with the file it is given
    rebuilt = read_request(ScoringRequest, Path(write_request(request, tmp_path / "req.json")))
    (scored,) = score_all(rebuilt.model_copy(update={"progress": False}))
    signature = json.loads((scored / "signature.json").read_text())
    assert signature["metrics"] == ["coverage"]
    assert signature["config"] == run.scoring.recorded()
    assert len(pd.read_parquet(scored / "answers.parquet")) == 2
