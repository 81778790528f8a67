"""Reading scored results: every model's answers, groups and summary as pandas frames.

`load_scores` is what the analysis notebooks (and a researcher in JupyterLab) call. It refuses
to put side by side models whose scores were computed differently (another matching rule, spaCy
model, perplexity model, a metric missing for one of them...) unless `allow_mixed=True`; then
each table row carries a `scoring_signature` and `mixed_scoring` says what differs. It refuses
models whose generations do not match their run cards (unfinished, instances missing) unless
`allow_incomplete=True`, and compares models run on different instances on those they share.
An unfinished score set (ocg/scoring/scoreset.py) is refused, naming its folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.errors import OcgFault, OcgInputError, shown
from ..core.frames import INSTANCE_KEY
from ..core.layout import SCORE_TABLES as TABLES
from ..core.layout import ModelGenerations, ModelScores, outputs
from ..core.names import check_name
from ..generation.answer_store.completeness import problems
from ..records import RunCard, Signature
from ..scoring.scoreset import holds_scores, read_score_set
from .designs import compare, design, restrict


def comparable_signature(signature: Signature) -> dict:
    """What must agree between two models for their numbers to sit in one table."""
    keys = {
        m: {k: v for k, v in key.items() if k != "inputs_sha256"}
        for m, key in signature.metric_keys.items()
    }
    status = {m: signature.status(m) for m in keys if m in signature.families}
    return {"metric_keys": keys, "status": status}


def _short_hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def signature_hash(signature: Signature) -> str:
    """The `scoring_signature` tables carry when models are scored differently (equal: comparable)."""
    return _short_hash(comparable_signature(signature))


def scoring_differences(
    signatures: dict[str, Signature], families: set[str] | None = None
) -> list[str]:
    """Human-readable lines naming models and the fields in which their scoring differs; only
    those of `families` where given (a family none of whose metrics is read warns of nothing)."""
    comparable = {m: comparable_signature(s) for m, s in signatures.items()}
    if len({_short_hash(c) for c in comparable.values()}) <= 1:
        return []
    lines = []
    fields = sorted(
        {
            (section, metric, k)
            for c in comparable.values()
            for section in ("metric_keys",)
            for metric, key in c[section].items()
            for k in key
        }
        | {("status", m, "status") for c in comparable.values() for m in c["status"]}
    )
    for section, metric, k in fields:
        if families is not None and metric not in families:
            continue
        values: dict[str, Any] = {}
        for model, c in comparable.items():
            v = (
                c[section].get(metric, {}).get(k, "(not scored)")
                if section == "metric_keys"
                else c["status"].get(metric, "(not scored)")
            )
            values.setdefault(json.dumps(v, sort_keys=True, default=str), []).append(model)
        if len(values) > 1:
            parts = "; ".join(f"{', '.join(models)}: {v}" for v, models in values.items())
            lines.append(f"{metric}.{k} differs: {parts}")
    return lines


def instance_keys(score_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """Per model: the (condition, template, set, permutation) of every scored instance (the
    samples of a sampled run are one instance), and its POS pattern (whose length is the number
    of concepts)."""
    return {
        p.name: pd.read_parquet(
            ModelScores(p).answers, columns=INSTANCE_KEY + ["pos_pattern"]
        ).drop_duplicates()
        for p in score_dirs
    }


def incomplete_models(
    signatures: dict[str, Signature], allow_incomplete: bool, where: str
) -> list[str]:
    """Lines naming models whose generations do not match their run cards (scoring's
    `completeness` block); an error when one is unfinished or short, unless allow_incomplete."""
    blocking, notes = [], []
    for model, sig in signatures.items():
        b, n = problems(sig.completeness)
        blocking += [f"{model}: {line}" for line in b]
        notes += [f"{model}: {line}" for line in n]
    if blocking and not allow_incomplete:
        raise OcgInputError(
            where,
            "these models' generations do not match what their run cards asked:\n  "
            + "\n  ".join(blocking)
            + "\nfinish them (re-running generation resumes), or "
            "pass allow_incomplete=True (a run file: allow_incomplete: true) to show them "
            "with a warning",
        )
    return blocking + notes


def nothing_scored(root: Path, given) -> str:
    """The refusal for a folder without scores: it names the folder searched (a relative path is
    the working directory's, as in pandas) and, when they hold scores, the outputs' own scores,
    which `load_scores()` reads from any folder."""
    default = outputs().scores.resolve()
    searched = f"no scored models in {root}" + (
        f" ({given} from {Path.cwd()})" if given and not Path(given).is_absolute() else ""
    )
    if root != default and default.is_dir() and any(holds_scores(p) for p in default.iterdir()):
        return f"{searched}; the outputs' scores are in {default}: load_scores() reads them"
    return f"{searched}; run 02_score first"


def _names_as_models(names, models) -> tuple[None, list[str]]:
    """load_scores(["a", "b"]): the names are `models`, of the outputs' scores."""
    if models is not None:
        raise OcgInputError(
            "scores_root",
            f"got the names {shown(names)} and models={shown(models)}; "
            "expected a folder, or one list of model names",
        )
    return None, list(names)


def _score_dirs(root: Path, models: list[str] | None, given) -> list[Path]:
    """The score sets under `root` (only `models`, each required, when named), names checked."""
    dirs = sorted(p for p in root.iterdir() if holds_scores(p)) if root.is_dir() else []
    if models is not None:
        if isinstance(models, str) or not all(isinstance(m, str) for m in models):
            raise OcgInputError("models", f"got {models!r}; expected a list of model names")
        found = {p.name for p in dirs}
        missing = [m for m in models if m not in found]
        if missing:
            raise OcgInputError(
                str(root),
                f"no scores for {missing} (scored here: {sorted(found) or 'none'}); "
                "run 02_score for them first",
            )
        dirs = [p for p in dirs if p.name in models]
    if not dirs:
        raise OcgInputError(str(root), nothing_scored(root, given))
    for p in dirs:  # a folder's name is its model's name in the tables (NaN for one named nan)
        check_name(str(p), p.name)
    return dirs


def references(signatures: dict[str, Signature]) -> dict[str, str]:
    """The reference entries among the models (docs/METHODS.md, "Reference rows"): model: its
    source, the `reference` its run card's settings record, read from the generations folder its
    signature names. A model whose card is missing or unreadable is not a reference."""
    found = {}
    for model, sig in signatures.items():
        card = ModelGenerations(Path(sig.generations)).run_card if sig.generations else None
        try:
            source = RunCard.read(card).settings.reference if card and card.is_file() else None
        except (
            OcgInputError,
            OcgFault,
            OSError,
        ):  # an unreadable card: the site's Models table says why
            source = None
        if source:
            found[model] = str(source)
    return found


def _scored_differently(differences: list[str]) -> str:
    return (
        "these models were scored differently and cannot share a "
        "table:\n  "
        + "\n  ".join(differences)
        + "\nrescore them alike (02_score), or pass allow_mixed=True to show them "
        "with a banner and a scoring_signature column"
    )


def _no_frame() -> pd.DataFrame:
    return pd.DataFrame()


@dataclass(frozen=True)
class Scores:
    """What `load_scores` returns: the scored models' tables, as pandas frames for any ad hoc
    work (`scores.answers.groupby(...)`), and what the pages say about them.

    answers, groups, summary: the tables read (`tables`), concatenated over the models; a table
    not asked for is an empty frame. signatures: model: its signature (ocg/records/, without the
    scoring settings). designs: model: what it answered (results/designs.py's `design`).
    references: the reference entries among the models (model: source, from their run cards).
    mixed_scoring, incomplete, instance_differences: the lines a page must show."""

    answers: pd.DataFrame = field(default_factory=_no_frame)
    groups: pd.DataFrame = field(default_factory=_no_frame)
    summary: pd.DataFrame = field(default_factory=_no_frame)
    signatures: dict[str, Signature] = field(default_factory=dict)
    designs: dict[str, dict[str, Any]] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)
    mixed_scoring: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()
    instance_differences: tuple[str, ...] = ()
    tables: tuple[str, ...] = TABLES  # the tables read

    @classmethod
    def empty(cls) -> Scores:
        """No model scored: empty tables, no signatures, no designs."""
        return cls(tables=())


def load_scores(
    scores_root: str | Path | None = None,
    models: list[str] | None = None,
    allow_mixed: bool = False,
    tables: tuple[str, ...] = TABLES,
    allow_incomplete: bool = False,
) -> Scores:
    """answers, groups and summary of the scored models (or only the `tables` named),
    concatenated, on the instances the models share (designs.py; all with allow_mixed);
    their signatures (ocg/records/, without the scoring settings), designs, the reference entries
    among them (`references`: model: source, from their run cards) and the lines a page must show (mixed scoring, incomplete generations, instance differences). Without
    `scores_root`, the outputs' scores (outputs/scores, moved by OCG_OUTPUTS) from any working
    directory; a relative `scores_root` is the working directory's. A list of names in place of
    `scores_root` is `models` (of the outputs' scores)."""
    if isinstance(scores_root, (list, tuple)):
        scores_root, models = _names_as_models(scores_root, models)
    root = Path(scores_root or outputs().scores).resolve()
    dirs = _score_dirs(root, models, scores_root)
    sets = {p.name: read_score_set(p, tables) for p in dirs}  # each checked against its signature
    signatures = {m: sig.replace(config=None) for m, (sig, _) in sets.items()}
    differences = scoring_differences(signatures)
    if differences and not allow_mixed:
        raise OcgInputError(str(root), _scored_differently(differences))
    incomplete = incomplete_models(signatures, allow_incomplete, str(root))
    keys = instance_keys(dirs)
    shared, instance_differences = compare(keys, allow_mixed, str(root))
    parts: dict[str, list[pd.DataFrame]] = {table: [] for table in tables}
    for p in dirs:
        frames = sets[p.name][1]
        if shared is not None:  # restricting needs every table of the set
            frames = restrict(read_score_set(p, TABLES)[1], shared)
        for table in tables:
            if differences:
                frames[table]["scoring_signature"] = signature_hash(signatures[p.name])
            parts[table].append(frames[table])
    read = {table: pd.concat(frames, ignore_index=True) for table, frames in parts.items()}
    if "answers" in read:
        read["answers"] = readable(read["answers"])
    return Scores(
        answers=read.get("answers", pd.DataFrame()),
        groups=read.get("groups", pd.DataFrame()),
        summary=read.get("summary", pd.DataFrame()),
        signatures=signatures,
        mixed_scoring=tuple(differences),
        incomplete=tuple(incomplete),
        designs={m: design(k) for m, k in keys.items()},
        instance_differences=tuple(instance_differences),
        references=references(signatures),
        tables=tuple(tables),
    )


def readable(answers: pd.DataFrame) -> pd.DataFrame:
    """Two columns for reading answers (docs/DATA.md): `concept_words`, the concepts in the asked
    order as the prompt showed them, and `template`, the instruction's text in params/templates.yaml
    as it is now (missing for a template id or condition it lacks). Categorical, computed once per
    distinct value: at paper size they repeat millions of times."""
    from ..data import load_templates

    if answers.empty or "concepts" not in answers:
        return answers
    config = load_templates()
    word_codes, word_keys = pd.factorize(answers["concepts"].map(tuple))
    words = (
        pd.Categorical.from_codes(word_codes, [" ".join(k) for k in word_keys])
        if len(word_keys)
        else pd.Categorical([])
    )
    pair_codes, pairs = pd.MultiIndex.from_arrays(
        [answers["template_id"], answers["condition"]]
    ).factorize()

    def text(template_id, condition):
        try:
            return config.template(int(template_id), condition)
        except OcgInputError:
            return None

    texts = [text(*pair) for pair in pairs]
    known = sorted({x for x in texts if x is not None})
    codes = pd.Series(pair_codes).map(
        {i: known.index(x) if x is not None else -1 for i, x in enumerate(texts)}
    )
    return answers.assign(
        concept_words=words, template=pd.Categorical.from_codes(codes.to_numpy(), known)
    )
