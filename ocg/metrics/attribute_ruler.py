"""spaCy's AttributeRuler with its matching done by dictionary lookups, for speed.

The small English pipeline's attribute_ruler (tag -> POS and morphology, a few lemma
exceptions) runs a general token Matcher over every document: about a quarter of the time of
coverage scoring. Its rules are all one or two tokens long and test only LOWER, TAG, DEP and
IS_SPACE, so here each rule's match is decided per token, memoised on those four values, and
the library's own `AttributeRuler.set_annotations` writes the attributes. `IndexedAttributeRuler
.match(doc)` returns exactly what `AttributeRuler.match(doc)` returns (tests/metrics/test_matching.py
checks it on every labelled sentence and on real outputs); a pipeline whose rules use anything
else is left to the library's matcher (`supports` says which).
"""

from __future__ import annotations

import re

_ATTRS = {"LOWER": "lower_", "TAG": "tag_", "DEP": "dep_", "IS_SPACE": "is_space"}
_OPERATORS = {"IN", "NOT_IN", "REGEX"}


def _predicate(value):
    """A test on one attribute's value, as the Matcher reads a pattern's value."""
    if not isinstance(value, dict):
        return lambda x: x == value
    ((op, arg),) = value.items()
    if op == "IN":
        return lambda x: x in arg
    if op == "NOT_IN":
        return lambda x: x not in arg
    regex = re.compile(arg)
    return lambda x: bool(regex.search(x))


def _token_test(token_pattern: dict):
    tests = [(list(_ATTRS).index(attr), _predicate(value)) for attr, value in token_pattern.items()]
    return lambda key: all(test(key[i]) for i, test in tests)


def supports(ruler) -> bool:
    """Can this AttributeRuler's rules be indexed (one or two tokens, the four attributes)?"""
    for i in range(len(ruler.attrs)):
        for pattern in ruler.matcher.get(str(i))[1]:
            if len(pattern) not in (1, 2):
                return False
            for spec in pattern:
                for attr, value in spec.items():
                    if attr not in _ATTRS or (
                        isinstance(value, dict) and (len(value) != 1 or set(value) - _OPERATORS)
                    ):
                        return False
    return True


class IndexedAttributeRuler:
    """Wraps a loaded AttributeRuler; `__call__(doc)` annotates the doc as the ruler would."""

    def __init__(self, ruler):
        self.ruler = ruler
        strings = ruler.vocab.strings
        self.single, self.double = [], []  # type: ignore[var-annotated]  # hashed file: no annotation; (attr_id, match_id, tests per token)
        for i in range(len(ruler.attrs)):
            match_id = strings[str(i)]
            for pattern in ruler.matcher.get(str(i))[1]:
                entry = (i, match_id, [_token_test(spec) for spec in pattern])
                (self.single if len(pattern) == 1 else self.double).append(entry)
        self._single_memo: dict[tuple, list] = {}
        self._first_memo: dict[tuple, list] = {}

    @staticmethod
    def _key(tok) -> tuple:
        return (tok.lower_, tok.tag_, tok.dep_, tok.is_space)

    def _singles(self, key: tuple) -> list:
        hits = self._single_memo.get(key)
        if hits is None:
            hits = sorted({(i, m) for i, m, (test,) in self.single if test(key)})
            self._single_memo[key] = hits
        return hits

    def _doubles_starting(self, key: tuple) -> list:
        hits = self._first_memo.get(key)
        if hits is None:
            hits = [(i, m, second) for i, m, (first, second) in self.double if first(key)]
            self._first_memo[key] = hits
        return hits

    def match(self, doc) -> list[tuple]:
        """As AttributeRuler.match: (attr_id, match_id, start, end), sorted."""
        keys = [self._key(tok) for tok in doc]
        found = set()
        for start, key in enumerate(keys):
            for i, m in self._singles(key):
                found.add((i, m, start, start + 1))
            if start + 1 < len(keys):
                for i, m, second in self._doubles_starting(key):
                    if second(keys[start + 1]):
                        found.add((i, m, start, start + 2))
        return sorted(found)

    def __call__(self, doc):
        self.ruler.set_annotations(doc, self.match(doc))
        return doc
