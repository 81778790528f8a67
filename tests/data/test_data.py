"""The dataset: counts, permutations, POS patterns, prompts exactly as docs/METHODS.md states them."""

import itertools
import json

import pandas as pd
import pytest

from ocg.data import (
    build_dataset,
    build_instances,
    ids_hash,
    load_concept_sets,
    load_dataset,
    load_templates,
    select_covering_subset,
)

# The templates of docs/METHODS.md, character for character (the test is an independent copy).
TEMPLATES_AS_DOCUMENTED = {
    0: (
        "Concepts: {concepts}\n\nWrite a sentence that includes all these words.",
        "Concepts: {concepts}\n\nWrite a sentence that includes all these words in the specified order.",
    ),
    1: (
        "Keywords: {concepts}\n\nWhat is a sentence that includes all these keywords?",
        "Keywords: {concepts}\n\nWhat is a sentence that includes all these keywords in the specified order?",
    ),
    2: (
        "Here are some concepts: {concepts}\n\nWhat is a sentence about these concepts?",
        "Here are some concepts: {concepts}\n\nWhat is a sentence about these concepts in the specified order?",
    ),
    3: (
        "Produce a sentence which mentions all of these concepts: {concepts}",
        "Produce a sentence which mentions all of these concepts in the specified order: {concepts}",
    ),
    4: (
        "Write a sentence about the following things:\n\n{concepts}",
        "Write a sentence about the following things in the specified order:\n\n{concepts}",
    ),
    5: (
        "Generate a sentence that includes all the following words: {concepts}",
        "Generate a sentence that includes all the following words in the specified order: {concepts}",
    ),
}
SYSTEM = "You are a helpful assistant. Please generate only an answer."
# sha256 of the sorted instance ids of the full 4-concept build (3 conditions). Changes only if
# the id scheme, the concept sets or the permutation order change: then review, and update.
GOLDEN_IDS_SHA256 = "e6a86ef5109a377cb095ce3a509dd71507c2983cc869ba4e93f521b450de57fa"


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = build_dataset(out_dir=tmp_path_factory.mktemp("data") / "n4")
    return load_dataset(out)


def test_counts_per_condition(full):
    df, manifest = full
    assert manifest["counts_per_condition"] == {
        "original": 27648,
        "ordered": 27648,
        "ordered_one_shot": 27648,
    }
    assert df.groupby("condition").size().to_dict() == {
        "original": 27648,
        "ordered": 27648,
        "ordered_one_shot": 27648,
    }
    assert df["set_id"].nunique() == 192 and df["n_concepts"].eq(4).all()


def test_every_set_has_its_24_distinct_orders(full):
    df, _ = full
    sub = df[(df.condition == "ordered") & (df.template_id == 0)]
    orders = sub.groupby("set_id")["concepts"].apply(lambda s: len({tuple(c) for c in s}))
    assert (orders == 24).all() and len(orders) == 192
    one = sub[sub.set_id == sub.set_id.iloc[0]]
    assert {tuple(c) for c in one.concepts} == set(itertools.permutations(one.concepts.iloc[0]))


def test_the_16_pos_patterns(full):
    df, _ = full
    patterns = set(df.pos_pattern)
    assert patterns == {"".join(p) for p in itertools.product("NV", repeat=4)}
    # a pattern is the POS letters of the concepts in the permuted order
    sets = {s.set_id: {c.word: c.pos for c in s.concepts} for s in load_concept_sets()}
    row = df.iloc[1234]
    assert row.pos_pattern == "".join(sets[row.set_id][w] for w in row.concepts)


def test_prompts_equal_the_spec_templates(full):
    df, _ = full
    for (tid, cond), sub in df.groupby(["template_id", "condition"]):
        row = sub.iloc[7]
        text = TEMPLATES_AS_DOCUMENTED[tid][0 if cond == "original" else 1]
        expected = text.replace("{concepts}", " ".join(row.concepts)) + "\nAnswer:"
        assert row.prompt == expected
        messages = json.loads(row.messages)
        assert messages[0] == {"role": "system", "content": SYSTEM}
        assert messages[-1] == {"role": "user", "content": expected}
        if cond == "ordered_one_shot":
            shot = TEMPLATES_AS_DOCUMENTED[tid][1].replace("{concepts}", "apple place tree pick")
            assert messages[1:3] == [
                {"role": "user", "content": shot + "\nAnswer:"},
                {
                    "role": "assistant",
                    "content": "My favorite words are apple, place, tree, and pick.",
                },
            ]
        else:
            assert len(messages) == 2


def test_concept_words_kept_as_given(full):
    df, _ = full
    words = {w for c in df.concepts for w in c}
    assert "dog" in words and "frisbee" in words
    assert not any("_" in w for w in words)


def test_instance_ids_are_stable_and_unique(full, tmp_path):
    df, manifest = full
    assert df.instance_id.is_unique
    assert manifest["ids_sha256"] == GOLDEN_IDS_SHA256 == ids_hash(df)
    again, manifest2 = load_dataset(build_dataset(out_dir=tmp_path / "again"))
    assert manifest2["ids_sha256"] == GOLDEN_IDS_SHA256
    assert manifest2["content_sha256"] == manifest["content_sha256"]


def test_five_concept_sets_by_parameter():
    sets = load_concept_sets(5)
    assert len(sets) == 208
    df = build_instances(sets[:2], load_templates(), ["ordered"])
    assert len(df) == 2 * 120 * 6 and set(df.n_concepts) == {5}
    assert df.groupby("set_id").perm_index.nunique().eq(120).all()  # 5! orders of each set


def test_subset_is_deterministic_and_covers_compositions():
    sets = load_concept_sets(4)
    compositions = {s.composition for s in sets}
    assert compositions == {"4N0V", "3N1V", "2N2V", "1N3V", "0N4V"}
    sub = select_covering_subset(sets, 5)
    assert {s.composition for s in sub} == compositions
    assert [s.set_id for s in sub] == [s.set_id for s in select_covering_subset(sets, 5)]
    sub8 = select_covering_subset(sets, 8)
    assert len(sub8) == 8 and {s.set_id for s in sub} <= {s.set_id for s in sub8}


def test_subset_build_writes_manifest(outputs):
    path = build_dataset(subset_k=3, conditions=["ordered"])
    assert path == outputs / "data" / "n4-k3"
    df, manifest = load_dataset(path)
    assert manifest["counts_per_condition"] == {"ordered": 3 * 24 * 6}
    assert len(manifest["set_ids"]) == 3 and set(df.set_id) == set(manifest["set_ids"])
    assert manifest["provenance"]["git"]["commit"]
    assert "pandas" in manifest["provenance"]["packages"]
    assert pd.read_parquet(path / "instances.parquet").instance_id.is_unique
