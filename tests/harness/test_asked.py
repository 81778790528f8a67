"""A harness asks ocg's instances with ocg's messages, selected as a run file selects them."""

import pytest

from ocg.core.errors import OcgInputError
from ocg.generation.selection import select_instances
from ocg.harness.asked import Selection, messages_of, messages_sha256, select
from ocg.harness.verdicts import pooled_rates

from .conftest import SMALL


def test_parameters_read_as_text_or_typed_give_one_selection():
    typed = Selection.given(
        conditions=["original", "ordered"], templates=[0], subset=1, permutations=2
    )
    assert typed == SMALL == Selection.given(**SMALL.as_params())
    assert SMALL.template_ids == (0,) and SMALL.subset_k == 1
    with pytest.raises(OcgInputError, match="templates"):
        Selection.given(templates="zero")


def test_the_instances_and_messages_are_ocgs():
    df = select(SMALL)
    ocg = select_instances(
        conditions=["original", "ordered"], subset_k=1, template_ids=[0], permutations=2
    )
    assert list(df.instance_id) == list(ocg.instance_id) and len(df) == 4
    messages = messages_of(df.iloc[0])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages_sha256(messages) != messages_sha256(messages_of(df.iloc[1]))


def test_conditions_no_harness_can_run_are_refused():
    with pytest.raises(OcgInputError, match="grammar"):
        select(Selection.given(conditions="ordered_constrained", subset=1))
    one_shot = Selection.given(
        conditions="ordered_one_shot", subset=1, templates="0", permutations=1
    )
    assert len(select(one_shot)) == 1  # inspect sends the example turns
    with pytest.raises(OcgInputError, match="one system and one user turn"):
        select(one_shot, single_turn=True)  # lm-eval's task does not


def test_pooled_rates_are_ratios_of_sums():
    rows = [
        {"all_present": 1, "in_order": 1, "copies_list": 1, "bare_list": 0},
        {"all_present": 1, "in_order": 0, "copies_list": 0, "bare_list": 0},
        {"all_present": 0, "in_order": 0, "copies_list": 0, "bare_list": 0},
        {"all_present": 1, "in_order": 1, "copies_list": 0, "bare_list": 0},
    ]
    rates = pooled_rates(rows)
    assert rates["coverage_wo_order"] == 75.0 and rates["coverage_w_order"] == 50.0
    assert rates["ordered_rate"] == pytest.approx(200 / 3) and rates["copies_list_rate"] == 50.0
