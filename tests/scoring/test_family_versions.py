"""Each scoring family's code has a version: a change to the code without a bump fails here, and a
bump makes stored scores stale and keeps models scored by different code out of one table.

After changing a family's code: bump its `version=` in ocg/scoring/families.py, then record the
new digest with `python tests/scoring/test_family_versions.py` (which refuses a change without a bump).
"""

import dataclasses
import importlib
import json
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent.parent / "fixtures" / "scoring_families.json"


def current() -> dict:
    from ocg.scoring.families import FAMILIES
    from ocg.scoring.family import code_digest

    return {
        name: {"version": f.version, "code_sha256": code_digest(f)} for name, f in FAMILIES.items()
    }


def unbumped(recorded: dict, now: dict) -> list[str]:
    return [
        name
        for name, c in now.items()
        if name in recorded
        and c["version"] == recorded[name]["version"]
        and c["code_sha256"] != recorded[name]["code_sha256"]
    ]


def test_a_family_whose_code_changed_has_a_new_version():
    recorded, now = json.loads(FIXTURE.read_text()), current()
    assert not unbumped(recorded, now), "\n".join(
        f"the code of scoring family {name} changed: bump VERSION of family {name} (its version= in "
        "ocg/scoring/families.py), then run `python tests/scoring/test_family_versions.py`"
        for name in unbumped(recorded, now)
    )
    assert now == recorded, (
        f"{FIXTURE} is out of date: run `python tests/scoring/test_family_versions.py`"
    )


def test_the_digest_sees_code_not_comments_docstrings_or_moves(tmp_path, monkeypatch):
    from ocg.scoring.families import FAMILIES
    from ocg.scoring.family import code_digest

    monkeypatch.syspath_prepend(str(tmp_path))
    source = '"""A metric."""\n\n\ndef fits(tok):\n    """Doc."""\n    return tok.endswith("ed")  # participle\n'
    source = source.replace(
        '    """Doc."""\n', '    """Doc."""\n    from ocg.files import x  # noqa\n'
    )
    edits = {
        "same": source.replace("Doc.", "Other words.").replace("# participle", "# comment"),
        "changed": source.replace('"ed"', '("ed", "en")'),
        # a module of ocg moved: the import's path changes, what it imports does not
        "moved": source.replace("from ocg.files", "from ocg.core.files"),
    }
    digests = {}
    for name, text in {"original": source, **edits}.items():
        (tmp_path / "toy_metric.py").write_text(text)
        module = (
            importlib.reload(sys.modules["toy_metric"])
            if "toy_metric" in sys.modules
            else importlib.import_module("toy_metric")
        )
        family = dataclasses.replace(FAMILIES["diverse"], code=(module, module.fits))
        digests[name] = code_digest(family)
    assert digests["same"] == digests["original"] == digests["moved"] != digests["changed"]


def test_a_version_bump_makes_scores_stale_and_tables_refuse_to_mix(tmp_path, monkeypatch):
    from ocg.core.errors import OcgInputError
    from ocg.results.scores import load_scores
    from ocg.scoring import FAMILIES, score_model
    from tests.helpers import write_generations

    rows = [
        {"set_id": "s", "template_id": 0, "perm_index": p, "concepts": ["dog", "run"], "answer": a}
        for p, a in enumerate(["Dogs run.", "A dog runs fast."])
    ]
    score_model(
        write_generations(tmp_path / "gen", "a", rows),
        metrics=["pbleu", "diverse"],
        out_dir=tmp_path / "s",
        progress=False,
    )
    bumped = dataclasses.replace(FAMILIES["pbleu"], version=FAMILIES["pbleu"].version + 1)
    monkeypatch.setitem(FAMILIES, "pbleu", bumped)
    score_model(
        write_generations(tmp_path / "gen", "b", rows),
        metrics=["pbleu", "diverse"],
        out_dir=tmp_path / "s",
        progress=False,
    )
    with pytest.raises(
        OcgInputError, match=rf"pbleu.version differs: a: {bumped.version - 1}; b: {bumped.version}"
    ):
        load_scores(tmp_path / "s")
    out = score_model(
        tmp_path / "gen" / "a", metrics=["pbleu", "diverse"], out_dir=tmp_path / "s", progress=False
    )
    signature = json.loads((out / "signature.json").read_text())
    assert signature["recomputed"] == ["pbleu"] and signature["reused"] == ["diverse"]
    assert load_scores(tmp_path / "s").mixed_scoring == ()


def test_numerical_packages_are_in_the_keys():
    from ocg.scoring import FAMILIES, load_scoring_config

    keys = {
        name: f.settings(
            load_scoring_config(
                overrides=dict(
                    bleurt_checkpoint="none/such", perplexity_model="x", embedding_model="none/such"
                )
            ),
            {"spacy_model": "s", "perplexity_used": None, "perplexity": (None, None, None)},
        )
        for name, f in FAMILIES.items()
    }
    assert {"numpy", "thinc", "spacy"} <= set(keys["coverage"]) and "numpy" in keys["pbleu"]
    assert {"torch", "transformers", "implementation"} <= set(keys["perplexity"])
    from ocg.metrics import (
        perplexity,
    )  # lmppl's version where it scores (transformers 4.x), else none

    impl = perplexity.implementation()
    assert keys["perplexity"]["implementation"] == impl and ("lmppl" in keys["perplexity"]) == (
        impl == "lmppl"
    )
    assert {"torch", "transformers", "bleurt-pytorch", "revision"} <= set(keys["pbleurt"])
    assert {"wordfreq", "implementation", "revision"} <= set(keys["slor"]) and "wordfreq" in keys[
        "nonword"
    ]
    assert {"sentence-transformers", "torch", "revision"} <= set(keys["semantic"])


if (
    __name__ == "__main__"
):  # record the current digests (after bumping the versions of changed families)
    sys.path.insert(0, str(Path(__file__).parent.parent.parent))
    recorded, now = json.loads(FIXTURE.read_text()), current()
    if unbumped(recorded, now):
        sys.exit(f"bump the version of {unbumped(recorded, now)} in ocg/scoring/families.py first")
    FIXTURE.write_text(json.dumps(now, indent=2) + "\n")
    print(f"recorded {FIXTURE}")
