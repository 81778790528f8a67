"""The run card's blocks are typed (ocg/records/card.py) and change nothing of its JSON: any
card, its blocks holding known keys and keys this version does not know in any order, reads and
writes back to the same JSON, key order included; a card the writer wrote reads back to its bytes,
each block a typed model with the writer's keys in the writer's order."""

import json
import types
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocg.core.errors import OcgInputError
from ocg.generation import generate
from ocg.generation.run_card import close_stale_runs
from ocg.records import (
    BackendBlock,
    Block,
    ConstrainedBlock,
    ProvenanceBlock,
    RunCard,
    RunEntry,
    RunSettings,
    RunStatus,
    SamplingBlock,
    Selection,
    Tally,
    Vocabulary,
)

NAME = st.text(max_size=8)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAME, inner, max_size=3),
    max_leaves=6,
)
SCALARS = {
    str: st.text(max_size=12),
    int: st.integers(),
    bool: st.booleans(),
    float: st.floats(allow_nan=False, allow_infinity=False),
}


def json_of(hint: Any) -> st.SearchStrategy:
    """JSON values a field of annotation `hint` reads (its blocks with unknown keys too)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        return st.one_of(*(json_of(a) for a in args))
    if origin is Annotated:
        return json_of(args[0])
    if hint is type(None):
        return st.none()
    if hint is Any:
        return JSON
    if origin is list:
        return st.lists(json_of(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(NAME, json_of(args[1]), max_size=2)
    if isinstance(hint, type) and issubclass(hint, Vocabulary):
        return st.sampled_from([m.value for m in hint])
    if isinstance(hint, type) and issubclass(hint, Block):
        return block_json(hint)
    return SCALARS[hint]


@st.composite
def block_json(draw, kind: type[Block]) -> dict:
    """A block's JSON: some of its known keys and some it does not know, in any order."""
    fields = kind.model_fields
    known = draw(st.lists(st.sampled_from(sorted(fields)), unique=True))
    unknown = draw(st.lists(NAME.filter(lambda k: k not in fields), unique=True, max_size=3))
    items = [(k, draw(json_of(fields[k].annotation))) for k in known]
    items += [(k, draw(JSON)) for k in unknown]
    return dict(draw(st.permutations(items)))


@st.composite
def card_json(draw) -> dict:
    """A run card as a file holds it: the format version, the known keys in the order the card
    writes them (those written only when set, sometimes), then keys it does not know."""
    card = {
        "format_version": 1,
        "model": draw(st.none() | NAME),
        "status": draw(st.sampled_from([s.value for s in RunStatus])),
        "spec": draw(st.dictionaries(NAME, JSON, max_size=3)),
        "settings": draw(block_json(RunSettings)),
        "instances": draw(st.dictionaries(NAME, NAME, max_size=2)),
        "selection": draw(st.dictionaries(NAME, block_json(Selection), max_size=2)),
        "backend": draw(block_json(BackendBlock)),
        "provenance": draw(st.none() | block_json(ProvenanceBlock)),
        "runs": draw(st.lists(block_json(RunEntry), max_size=3)),
    }
    when_set = {
        "checked_utc": NAME,
        "records": st.dictionaries(NAME, block_json(Tally), max_size=2),
        "sampling": block_json(SamplingBlock),
        "constrained": st.dictionaries(NAME, block_json(ConstrainedBlock), max_size=2),
    }
    for key, values in when_set.items():
        if draw(st.booleans()):
            card[key] = draw(values)
    unknown = NAME.filter(lambda k: k not in RunCard.model_fields and k != "format_version")
    return {**card, **draw(st.dictionaries(unknown, JSON, max_size=3))}


def _text(data: dict) -> str:
    """The JSON as the card's file holds it (key order matters: dicts compare without it)."""
    return json.dumps(data, indent=2)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(card_json())
def test_any_card_reads_and_writes_back_to_the_same_json_keys_in_order(data):
    card = RunCard.from_json(data)
    assert _text(card.to_json()) == _text(data)
    again = RunCard.from_json(json.loads(_text(data)))  # as read from its file
    assert _text(again.to_json()) == _text(data) and again == card
    assert _text(card.model_dump()) == _text(data)


@settings(max_examples=100, deadline=None)
@given(block_json(RunEntry), st.sampled_from([s.value for s in RunStatus]), JSON)
def test_a_changed_block_keeps_its_keys_in_place_and_adds_new_ones_last(entry, status, value):
    """`replace` is a dict's update: a key held keeps its place, a new one comes last."""
    run = RunEntry.model_validate(entry)
    changed = run.replace(status=status, an_unknown_key=value)
    assert _text(changed.to_json()) == _text({**entry, "status": status, "an_unknown_key": value})
    assert changed.status is RunStatus(status) and _text(run.to_json()) == _text(entry)


def test_absent_and_null_keys_stay_apart_and_unknown_ones_are_kept():
    settings_ = RunSettings.model_validate({"zeta": [1], "resolved_revision": None, "id": "o/m"})
    assert settings_.id == "o/m" and settings_.other == {"zeta": [1]}
    assert settings_.has("resolved_revision") and settings_.recorded("resolved_revision", 1) is None
    assert not settings_.has("attention") and settings_.recorded("attention", "auto") == "auto"
    assert list(settings_.to_json()) == ["zeta", "resolved_revision", "id"]
    assert not RunSettings() and not BackendBlock.model_validate({})  # an empty block is false


def test_a_stale_run_is_closed_in_place_with_its_note_last():
    running = {"started_utc": "t", "status": "running", "conditions": ["ordered"], "x": 1}
    done = {"status": "complete", "conditions": ["ordered"]}
    closed = close_stale_runs([RunEntry.model_validate(running), RunEntry.model_validate(done)])
    assert [_text(r.to_json()) for r in closed] == [
        _text(
            {
                **running,
                "status": "interrupted",
                "note": "the process ended without finishing (killed?)",
            }
        ),
        _text(done),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"runs": [{"status": "done"}]}, r"runs\[0\]\.status: expected one of 'running', "),
        ({"settings": {"batch_size": "8"}}, r"settings\.batch_size: expected an integer, got '8'"),
        (
            {"selection": {"ordered": {"subset_k": True}}},
            r"selection\.ordered\.subset_k: expected an integer, got True",
        ),
        ({"runs": [{"seconds": "1"}]}, r"runs\[0\]\.seconds: expected a number, got '1'"),
        ({"backend": ["transformers"]}, r"backend: expected an object, got \['transformers'\]"),
        ({"runs": [{"batch_invariance": 3}]}, r"runs\[0\]\.batch_invariance: expected an object"),
    ],
)
def test_a_block_key_of_the_wrong_type_is_refused_naming_its_path(data, message):
    with pytest.raises(OcgInputError, match=rf"^gen/m/run_card.json: {message}"):
        RunCard.from_json(data, "gen/m/run_card.json")


def test_the_writers_card_reads_back_to_its_bytes_each_block_typed_in_the_writers_order(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  synth: {backend: replay, id: x/y, batch_size: 16}\n")
    ask = dict(
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
        subset_k=1,
        template_ids=[0],
        permutations=2,
        samples=2,
        sampling={"temperature": 0.7, "top_p": 1.0},
    )
    path = generate("synth", conditions=["ordered"], **ask) / "run_card.json"
    generate("synth", conditions=["ordered"], **ask)  # nothing to do: checked_utc, records
    text = path.read_text()
    card = RunCard.read(path)
    assert json.dumps(card.to_json(), indent=2) + "\n" == text
    assert card.write(tmp_path / "again.json").read_text() == text
    assert isinstance(card.settings, RunSettings) and isinstance(card.backend, BackendBlock)
    assert isinstance(card.provenance, ProvenanceBlock) and isinstance(card.sampling, SamplingBlock)
    assert isinstance(card.selection["ordered"], Selection)
    assert isinstance(card.records["ordered"], Tally)
    assert [type(r) for r in card.runs] == [RunEntry] and card.runs[0].status is RunStatus.COMPLETE
    assert list(json.loads(text)) == [
        "format_version",
        *("model", "status", "spec", "settings", "instances", "selection", "backend"),
        *("provenance", "runs", "checked_utc", "records", "sampling"),
    ]
    written = json.loads(text)
    assert list(written["settings"]) == [
        *("id", "revision", "resolved_revision", "revision_pinned", "quantization", "dtype"),
        *("attention", "max_new_tokens", "seed", "decoding", "generation_overrides"),
        *("answer_extraction", "batch_size", "system_prompt", "chat_template_sha256"),
        *("system_mode", "template_default_system_prompt", "prompt_date", "bos", "sampling"),
    ]
    assert list(written["backend"]) == [  # the replay backend's order, not BackendBlock's
        *("backend", "source", "file_sha256", "rates", "resolved_revision"),
        *("chat_template_sha256", "system_mode", "template_default_system_prompt"),
        *("prompt_date", "bos", "planned_batch_size", "note"),
    ]
    assert list(written["runs"][0]) == [
        *("started_utc", "conditions", "subset_k", "dataset", "template_ids", "permutations"),
        *("permutation_seed", "permutation_rule", "n_instances", "todo", "status"),
        *("repaired_torn_bytes", "written", "seconds", "new_tokens", "tokens_per_s"),
        *("answers_by_status_and_source", "finished_utc"),
    ]
    assert list(written["selection"]["ordered"]) == list(Selection.model_fields)
    assert list(written["sampling"]) == list(SamplingBlock.model_fields)
    assert list(written["records"]["ordered"]) == list(Tally.model_fields)
    assert list(written["provenance"]) == list(ProvenanceBlock.model_fields)
    assert card.sampling.samples == 2 and card.sampling.seeds == [42, 43]
    assert card.selection_of("ordered") == card.selection["ordered"]
    assert card.selection["ordered"].permutations == card.runs[0].permutations == 2
    assert (
        card.records["ordered"].asked == card.records["ordered"].present == 2 * 2
    )  # 2 permutations, 2 samples
