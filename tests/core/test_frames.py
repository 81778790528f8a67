"""The frame schema is spelled once (ocg/core/frames.py): no other module writes a key's columns, the
sample-0 rule, the concept-set sizes or the template and permutation sentences again."""

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

import ocg
from ocg.core import frames
from ocg.core.errors import OcgInputError

ROOT = Path(ocg.__file__).parent
KEYS = [frames.SET_KEY, frames.GROUP_KEYS, frames.SUMMARY_KEYS, frames.INSTANCE_KEY]


def _others():
    return [p for p in sorted(ROOT.rglob("*.py")) if p.name != "frames.py"]


def _literals(tree):
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.List, ast.Tuple))
            and node.elts
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        ):
            yield node, [e.value for e in node.elts]


def test_no_module_spells_a_key_again():
    copies = [
        f"{p.relative_to(ROOT)}:{node.lineno} {values}"
        for p in _others()
        for node, values in _literals(ast.parse(p.read_text()))
        if any(len(key) >= 3 and values[: len(key)] == key for key in KEYS)
        or any(values[i : i + len(key)] == key for key in KEYS if len(key) >= 4 for i in (1, 2))
    ]
    assert not copies, "import the key from ocg/core/frames.py:\n" + "\n".join(copies)


def test_no_module_spells_the_sample_rule_or_the_sizes_again():
    pattern = re.compile(
        r"""get\(["']sample["'], 0\)|\[["']sample["']\]\.fillna\(0\)|choices=\(4, 5\)"""
        r"""|["']n_concepts["'], 4\)|n_concepts: int = 4\b|has only \{"""
    )
    copies = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in _others()
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not copies, "use ocg/core/frames.py:\n" + "\n".join(copies)


def test_a_record_without_sample_is_sample_0():
    assert frames.record_sample({"instance_id": "x"}) == 0
    assert frames.sample_index(None) == 0 and frames.sample_index(float("nan")) == 0
    mixed = pd.DataFrame({"sample": [2, None]})
    assert frames.samples_or_zero(mixed).tolist() == [2, 0]
    assert frames.sample_column(pd.DataFrame({"x": [1]})) is None
    assert frames.samples_or_zero(pd.DataFrame({"x": [1, 2]})).tolist() == [0, 0]
    with pytest.raises(
        OcgInputError, match=r"f.jsonl:3: field 'sample' must be a sample index >= 0, got True"
    ):
        frames.checked_sample("f.jsonl:3", {"sample": True})


def test_the_permutation_and_template_checks_say_one_sentence():
    frames.check_permutations("p", None, 4)
    frames.check_permutations("p", 24, 4)
    with pytest.raises(
        OcgInputError, match=r"^p: got 121; a set of 5 concepts has only 120 permutations"
    ):
        frames.check_permutations("p", 121, 5)
    assert (
        str(frames.unknown_template("t", 9, {1: 0, 0: 0}))
        == "t: unknown template id 9; known: [0, 1]"
    )
