"""CommonGen-lite concept sets: parsing `word_POS` entries, with errors that name file and line."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import loads_json, read_text
from ..core.frames import DEFAULT_N_CONCEPTS, N_CONCEPTS
from ..core.paths import CONCEPT_SETS_FILE

POS_TAGS = ("N", "V")  # noun, verb: the only suffixes CommonGen-lite uses
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")  # letters, with inner hyphens or apostrophes


@dataclass(frozen=True)
class Concept:
    word: str
    pos: str  # "N" or "V"

    @property
    def tagged(self) -> str:
        return f"{self.word}_{self.pos}"


@dataclass(frozen=True)
class ConceptSet:
    set_id: str
    concepts: tuple[Concept, ...]  # in the dataset's own order
    line: int  # 1-based line in the source file, for error messages

    @property
    def words(self) -> list[str]:
        return [c.word for c in self.concepts]

    @property
    def composition(self) -> str:
        """Noun/verb counts, e.g. '2N2V': the unit the demo subset must cover."""
        n_nouns = sum(c.pos == "N" for c in self.concepts)
        return f"{n_nouns}N{len(self.concepts) - n_nouns}V"


def parse_concept(entry: object, where: str) -> Concept:
    """`catch_V` -> Concept('catch', 'V'). Words are kept exactly as given (e.g. `singe_V`); a
    word is lower-case letters (inner - or '), since matching compares lower-cased lemmas."""
    if not isinstance(entry, str) or "_" not in entry:
        raise OcgInputError(where, f"concept {entry!r} is not of the form word_POS (e.g. 'dog_N')")
    word, pos = entry.rsplit("_", 1)
    if pos not in POS_TAGS:
        raise OcgInputError(
            where, f"unknown POS suffix {pos!r} in {entry!r}; expected one of {', '.join(POS_TAGS)}"
        )
    if not _WORD.fullmatch(word):
        raise OcgInputError(
            where,
            f"concept {entry!r}: expected one word of letters (inner - or ' "
            "allowed), no spaces, tabs, digits or invisible characters",
        )
    if word != word.lower():  # spaCy's lemmas and the matched tokens are lower-cased
        raise OcgInputError(
            where,
            f"concept {entry!r}: expected a lower-case word; a capitalised "
            "concept could never match",
        )
    return Concept(word, pos)


def _parse_set(raw: str, where: str) -> tuple[str, tuple[Concept, ...]]:
    """One line's set id and concepts, each checked on its own (no look at the other lines)."""
    try:
        record = loads_json(raw)
    except json.JSONDecodeError as exc:
        raise OcgInputError(
            where,
            f"malformed JSON ({exc.msg} at column {exc.colno}); "
            'expected {"id": ..., "concept_set": [...]}',
        ) from None
    if not isinstance(record, dict) or "id" not in record or "concept_set" not in record:
        raise OcgInputError(where, 'expected an object with keys "id" and "concept_set"')
    set_id, entries = record["id"], record["concept_set"]
    if isinstance(set_id, bool) or not isinstance(set_id, (str, int)) or not str(set_id).strip():
        raise OcgInputError(where, f'"id" must be a non-empty string or an integer, got {set_id!r}')
    set_id = str(set_id)
    if not isinstance(entries, list):
        raise OcgInputError(where, f'"concept_set" must be a list, got {type(entries).__name__}')
    if len(entries) not in N_CONCEPTS:
        raise OcgInputError(
            where,
            f"concept set {set_id} has {len(entries)} concepts; expected one of {N_CONCEPTS}",
        )
    concepts = tuple(parse_concept(e, where) for e in entries)
    repeated = [w for w, k in Counter(c.word for c in concepts).items() if k > 1]
    if repeated:
        raise OcgInputError(
            where,
            f"concept set {set_id} repeats {repeated}; "
            "the order of a repeated concept is undefined",
        )
    return set_id, concepts


def read_concept_sets(path: str | Path = CONCEPT_SETS_FILE) -> list[ConceptSet]:
    """Every set in a CommonGen-lite JSONL file, validated line by line."""
    path = Path(path)
    sets: list[ConceptSet] = []
    seen: dict[str, int] = {}
    same: dict[frozenset, tuple[str, int]] = {}
    if not path.is_file():
        raise OcgInputError(str(path), "no such concept-set file")
    for lineno, raw in enumerate(read_text(path).splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        set_id, concepts = _parse_set(raw, where)
        if set_id in seen:
            raise OcgInputError(where, f"duplicate set id {set_id} (first on line {seen[set_id]})")
        seen[set_id] = lineno
        key = frozenset(c.tagged for c in concepts)
        if key in same:
            raise OcgInputError(
                where,
                f"concept set {set_id} has the concepts of set {same[key][0]} "
                f"(line {same[key][1]}); each set must be distinct",
            )
        same[key] = (set_id, lineno)
        sets.append(ConceptSet(set_id, concepts, lineno))
    if not sets:
        raise OcgInputError(str(path), "no concept sets in file")
    return sets


def load_concept_sets(
    n_concepts: int = DEFAULT_N_CONCEPTS,
    path: str | Path = CONCEPT_SETS_FILE,
    set_ids: list[str] | None = None,
) -> list[ConceptSet]:
    """The sets of exactly `n_concepts` concepts (192 for 4, 208 for 5), in file order.

    With `set_ids`, exactly those sets; one of another size is an error, not silently dropped.
    """
    if n_concepts not in N_CONCEPTS:
        raise OcgInputError("n_concepts", f"got {n_concepts}; expected one of {N_CONCEPTS}")
    all_sets = read_concept_sets(path)
    if set_ids is not None:
        by_id = {s.set_id: s for s in all_sets}
        missing = [i for i in set_ids if i not in by_id]
        if missing:
            raise OcgInputError(str(path), f"unknown set ids {missing}")
        chosen = [by_id[i] for i in set_ids]
        wrong = [s for s in chosen if len(s.concepts) != n_concepts]
        if wrong:
            s = wrong[0]
            raise OcgInputError(
                f"{path}:{s.line}",
                f"concept set {s.set_id} has {len(s.concepts)} concepts; expected {n_concepts}",
            )
        return chosen
    sets = [s for s in all_sets if len(s.concepts) == n_concepts]
    if not sets:
        raise OcgInputError(str(path), f"no concept set has {n_concepts} concepts")
    return sets


def select_covering_subset(sets: list[ConceptSet], k: int) -> list[ConceptSet]:
    """A deterministic subset of k sets that covers the noun/verb compositions.

    Round-robin over compositions (most verbs first, so the rare all-verb sets are in even a
    tiny subset), taking sets in file order within each composition.
    """
    if k < 1:
        raise OcgInputError("subset_k", f"got {k}; expected a positive number of concept sets")
    if k > len(sets):  # silently all of them would be named as k (n4-k100000)
        raise OcgInputError(
            "subset_k",
            f"got {k}; there are {len(sets)} concept sets to choose from: give at most "
            f"{len(sets)}, or null for all",
        )
    if k == len(sets):
        return list(sets)
    by_comp: dict[str, list[ConceptSet]] = {}
    for s in sets:
        by_comp.setdefault(s.composition, []).append(s)
    order = sorted(by_comp, key=lambda c: (-int(c.split("N")[1].rstrip("V")), c))
    chosen: list[ConceptSet] = []
    depth = 0
    while len(chosen) < k:
        for comp in order:
            if depth < len(by_comp[comp]) and len(chosen) < k:
                chosen.append(by_comp[comp][depth])
        depth += 1
    position = {s.set_id: i for i, s in enumerate(sets)}
    return sorted(chosen, key=lambda s: position[s.set_id])
