"""A deterministic writer of realistic answers, for the replay backend without a file.

It stands in for a model when only the size and shape of the answers matter (benchmarks,
tests of everything after generation). Each answer is a function of (writer seed, model name,
instance, sample index) alone, so a resumed or repeated run writes the same bytes. What real outputs show,
at rates that differ from model to model (drawn from the model's name unless given):
  - concepts inflected (plural nouns; -s, -ed, -ing verbs), put in another order, or dropped;
  - the same answer repeated across permutations of one group (template x concept set);
  - degenerate answers: empty, one word, markdown, several sentences, overlong, non-English.
The ordered conditions follow the order more often than the original one, as in the paper.
Not a language model: the sentences are templated; scores on them say nothing about models.
"""

from __future__ import annotations

import hashlib
import random

WRITER_VERSION = "synthetic-v2"  # v2: sitting, not siting

_IRREGULAR = {
    "catch": "caught",
    "throw": "threw",
    "ride": "rode",
    "sit": "sat",
    "run": "ran",
    "cut": "cut",
    "eat": "ate",
    "drink": "drank",
    "swim": "swam",
    "hold": "held",
    "sing": "sang",
    "fly": "flew",
    "dive": "dove",
    "write": "wrote",
    "take": "took",
    "give": "gave",
    "hang": "hung",
}
_OPENERS = [
    "The",
    "A",
    "Every morning the",
    "Yesterday a",
    "In the park, the",
    "My",
    "On Sunday the",
    "After lunch, a",
    "Near the river the",
    "Each day our",
]
_GLUE = [
    "and",
    "with",
    "near",
    "while",
    "before",
    "on",
    "by",
    "as the",
    "then",
    "for",
    "after",
    "beside the",
]
_ENDINGS = [
    ".",
    " today.",
    " in the evening.",
    " again.",
    "!",
    " with great care.",
    " at dawn.",
    " for the first time.",
]
_FILLER = ["happily", "quickly", "together", "slowly", "once more", "all afternoon"]


def _rng(*parts) -> random.Random:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def model_rates(model: str, seed: int, given: dict | None = None) -> dict[str, float]:
    """Per-model rates (ocg/config/model_registry.py, RATE_KEYS): drawn from the model's name (models differ,
    reruns agree), or given."""
    r = _rng("rates", seed, model)
    rates = {
        "reorder": r.uniform(0.1, 0.6),
        "drop": r.uniform(0.01, 0.15),
        "inflect": r.uniform(0.3, 0.7),
        "repeat": r.uniform(0.05, 0.6),
        "degenerate": r.uniform(0.0, 0.06),
    }
    rates.update(given or {})
    return {k: round(float(v), 4) for k, v in rates.items()}


def _inflect(word: str, pos: str, r: random.Random) -> str:
    if pos == "N":
        return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    form = r.choice(("s", "ed", "ing"))
    if form == "ed" and word in _IRREGULAR:
        return _IRREGULAR[word]
    if (
        form in ("ing", "ed")
        and len(word) <= 4
        and word[-1] in "bdgmnpt"
        and word[-2] in "aeiou"
        and word[-3:-2] not in ("a", "e", "i", "o", "u")
    ):
        word = word + word[-1]  # sit -> sitting, hop -> hopped
    if form == "ing":
        return (word[:-1] if word.endswith("e") and not word.endswith("ee") else word) + "ing"
    if form == "ed":
        return word + ("d" if word.endswith("e") else "ed")
    return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")


def _sentence(r: random.Random, words: list[str]) -> str:
    parts = [r.choice(_OPENERS)]
    for i, w in enumerate(words):
        parts.append(w)
        if r.random() < 0.15:
            parts.append(r.choice(_FILLER))
        if i < len(words) - 1:
            parts.append(r.choice(_GLUE))
    return " ".join(parts) + r.choice(_ENDINGS)


def _degenerate(r: random.Random, sentence: str, words: list[str]) -> str:
    kind = r.choice(("empty", "one_word", "markdown", "multi", "overlong", "non_ascii"))
    if kind == "empty":
        return ""
    if kind == "one_word":
        return words[0].capitalize()
    if kind == "markdown":
        return f"**Answer:** {sentence}"
    if kind == "multi":
        return f"{sentence} It was a day to remember. Everyone agreed."
    if kind == "overlong":
        return sentence[:-1] + ", " + ", ".join(r.choice(_FILLER) for _ in range(60)) + "."
    return "Der Hund und die Katze spielen zusammen im Garten, während die Sonne scheint. Schön!"


def write_answer(
    instance: dict, model: str, seed: int, rates: dict[str, float], sample: int = 0
) -> str:
    """The answer `model` gives to one instance (keys: condition, template_id, set_id,
    perm_index, concepts, pos_pattern) in sample `sample`: sample 0 is the one answer it always
    gave, later samples draw from RNGs that also take the sample index."""
    group = (
        instance["condition"],
        instance["template_id"],
        instance["set_id"],
        *([f"sample={sample}"] if sample else []),
    )
    words = list(zip(instance["concepts"], instance["pos_pattern"]))
    if _rng("repeat", seed, model, *group, instance["perm_index"]).random() < rates["repeat"]:
        # the group's one stock answer, whatever the order asked (models often give it)
        r = _rng("stock", seed, model, *group)
        words = sorted(words)
        r.shuffle(words)
    else:
        r = _rng("answer", seed, model, *group, instance["perm_index"])
    follows = 0.9 if instance["condition"] != "original" else 0.5
    if r.random() < rates["reorder"] * (1 - follows):
        r.shuffle(words)
    kept = [(w, p) for w, p in words if r.random() >= rates["drop"]] or words[:1]
    surface = [_inflect(w, p, r) if r.random() < rates["inflect"] else w for w, p in kept]
    sentence = _sentence(r, surface)
    if r.random() < rates["degenerate"]:
        return _degenerate(r, sentence, surface)
    return sentence
