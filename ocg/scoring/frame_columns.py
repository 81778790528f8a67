"""The columns of the three score frames (answers, groups, summary): the one source of truth.

`ocg/scoring/dictionary.py` checks every table it reads against these rows, and docs/DATA.md's
three frame tables are generated from them (`python -m ocg.scoring.frame_columns` rewrites them;
tests/scoring/test_data_dictionary.py fails while the file is stale). Nothing reads the docs at
run time, so an installed wheel checks its tables as a checkout does.

`when`: `always`, a scoring family's name, `samples`, `perplexity or pbleurt missing`, `mixed`.
`kind`: the type and unit the check enforces ("bool", "int", "str", "fraction 0-1", "% 0-100",
"list of ...", "as the metric", ...). Names may hold `<rule>` (each matching rule), `<flag>`
(each answer flag) or `<metric>` (each summary metric; `<metric>_sample_sd` is not checked).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Column:
    """One column: its name, when it is there, its type and unit, and what it holds."""

    name: str
    when: str
    kind: str
    what: str


ANSWERS = (
    Column(
        "instance_id", "always", "str", "`<condition>-t<template>-<set_id>-p<perm>`: one prompt"
    ),
    Column(
        "sample",
        "samples",
        "int",
        "which of the run's repeated samples (0..k-1; only for runs with `sampling`)",
    ),
    Column("model", "always", "str", "the models file's entry name"),
    Column(
        "condition",
        "always",
        "str",
        "`original`, `ordered`, `ordered_one_shot`, `ordered_constrained` (params/templates.yaml)",
    ),
    Column("template_id", "always", "int", "the instruction template, 0-5"),
    Column(
        "set_id",
        "always",
        "str",
        "the concept set's id in the concept-set file (a hex hash for the shipped sets)",
    ),
    Column(
        "perm_index", "always", "int", "which of the 24 (n = 4) or 120 (n = 5) orders of the set"
    ),
    Column(
        "pos_pattern",
        "always",
        "str",
        "the parts of speech of the concepts in the asked order, N or V each (`NVNN`)",
    ),
    Column("concepts", "always", "list of str", "the concept words in the asked order"),
    Column(
        "concept_words",
        "always",
        "categorical str",
        "the same, joined by spaces, as the prompt shows them",
    ),
    Column(
        "template",
        "always",
        "categorical str",
        "the instruction's text with `{concepts}`, from params/templates.yaml as it is now (missing for an id or condition it lacks; a run built from another templates file: that file, named in its dataset's manifest.json)",
    ),
    Column("answer", "always", "str or None", "the extracted answer (None: extraction failed)"),
    Column(
        "answer_status",
        "always",
        "str",
        "`ok`, `empty`, or why extraction failed (`unclosed_think`, `no_output`)",
    ),
    Column(
        "answer_source",
        "always",
        "str",
        "where the answer came from: `raw`, `after_think`, `output_tag`",
    ),
    Column(
        "finish_reason",
        "always",
        "str",
        "why generation stopped: `stop`, `length` (the token budget), `replay`",
    ),
    Column(
        "<flag>",
        "always",
        "bool",
        'the answer flags: `failed`, `empty`, `one_word`, `markdown`, `multi_sentence`, `overlong`, `non_ascii`, `no_letters`, `replaced_chars`, `looping`, `format_chars`, `long_run`, `truncated`, `copies_list`, `bare_list` (the last two False where coverage was not scored) (METHODS, "Answer flags", "Answers that copy the list")',
    ),
    Column("n_tokens", "always", "int", "13a tokens of the answer (sacreBLEU's tokenizer)"),
    Column(
        "all_present", "coverage", "bool", "every concept is in the answer (ocg's matching rule)"
    ),
    Column(
        "in_order",
        "coverage",
        "bool",
        "every concept is there in the asked order (some increasing sequence of matches)",
    ),
    Column(
        "coverage_frac",
        "coverage",
        "fraction 0-1",
        "share of the concepts present (Lin et al.'s per-concept coverage)",
    ),
    Column(
        "tokens",
        "coverage",
        "list of str",
        "spaCy's tokens of the answer (for the browser; the answer as written is `answer`)",
    ),
    Column(
        "match_positions",
        "coverage",
        "list of int",
        "per concept, in the asked order: the index into `tokens` of its first match; -1 when it is missing",
    ),
    Column(
        "order_positions",
        "coverage",
        "list of int",
        "per concept: the token index the order check used: the first match after the previous concept's while the order holds (a later mention can count), after it breaks the concept's first match; -1 when missing",
    ),
    Column(
        "pos_all_present",
        "coverage",
        "bool",
        'every concept is there with the part of speech its set gives it: a match (ocg\'s rule) that spaCy tags NOUN or PROPN for an N concept, VERB for a V concept (METHODS, "PoS-correct coverage")',
    ),
    Column(
        "pos_in_order",
        "coverage",
        "bool",
        "the same matches in the asked order (the order check of `in_order`)",
    ),
    Column(
        "all_present@<rule>",
        "coverage",
        "bool",
        "`all_present` under each matching rule (the sensitivity view)",
    ),
    Column("in_order@<rule>", "coverage", "bool", "`in_order` under each rule"),
    Column(
        "in_order_first@<rule>",
        "coverage",
        "bool",
        "in order reading first occurrences only, under each rule",
    ),
    Column(
        "distinct_2",
        "distinct",
        "fraction 0-1",
        "unique bigrams / bigrams of this answer (13a tokens; 0 for an empty answer)",
    ),
    Column(
        "diverse_rate",
        "diverse",
        "fraction 0-1",
        "its group's Diverse Rate, given to each answer of the group (Table 2)",
    ),
    Column(
        "perplexity",
        "perplexity",
        "perplexity",
        "GPT2-XL (or the chosen fallback) per answer; NaN for an answer under two tokens",
    ),
    Column(
        "ppl_status",
        "perplexity",
        "str",
        "how the answer's perplexity was scored: `ok`; `truncated` (longer than the model's context: scored on its start); `too_short` (under two tokens: NaN); `empty` (no text: NaN); `missing` (no perplexity model: NaN, the reason in the summary's `perplexity_missing_reason`)",
    ),
    Column(
        "slor",
        "slor",
        "nats per token",
        'SLOR: the perplexity model\'s log probability minus the unigram (wordfreq) log probability of the same tokens, per token (METHODS, "Acceptability"); NaN where perplexity is',
    ),
    Column(
        "has_nonword",
        "nonword",
        "bool",
        "the answer holds a word no lexicon knows (wordfreq, lemminflect) that is no form of a concept",
    ),
    Column("nonwords", "nonword", "list of str", "those words, in the order they occur"),
    Column(
        "judge_score",
        "judge",
        "score 1-5",
        'the LLM judge\'s rating: grammatical and plausible (5) to not a sentence (1); NaN where unjudged (an empty answer, a reply that is no such JSON) (METHODS, "LLM judge")',
    ),
    Column(
        "judge_in_order",
        "judge",
        "fraction 0-1",
        "1 where the judge read every concept in the asked order, 0 where not, NaN where unjudged",
    ),
    Column(
        "judge_order",
        "judge",
        "list of str or None",
        "the concepts in the order the judge read them",
    ),
    Column("scoring_signature", "mixed", "str", "a short hash of how the model was scored"),
)

GROUPS = (
    Column("model", "always", "str", "as in answers"),
    Column("condition", "always", "str", "as in answers"),
    Column("template_id", "always", "int", "as in answers"),
    Column("set_id", "always", "str", "as in answers"),
    Column(
        "sample",
        "samples",
        "int",
        "the sample the group's answers belong to (a group never mixes samples)",
    ),
    Column("n", "always", "int", "answers in the group (24 for n = 4)"),
    Column(
        "pbleu",
        "pbleu",
        "BLEU 0-100",
        "mean sentence BLEU over the group's ordered pairs (lower: more diverse)",
    ),
    Column("diverse_rate", "diverse", "fraction 0-1", "distinct answers / answers in the group"),
    Column("pbleurt", "pbleurt", "BLEURT x 100", "mean BLEURT-20 over the group's ordered pairs"),
    Column(
        "vendi",
        "semantic",
        "Vendi score",
        'the Vendi score of the group\'s answers over sentence embeddings (cosine kernel): the effective number of distinct answers, 1 to `n` (METHODS, "Semantic diversity")',
    ),
    Column(
        "pairwise_cosine",
        "semantic",
        "cosine -1 to 1",
        "mean cosine similarity of the group's answers' embeddings over the ordered pairs i != j; NaN for a group of one",
    ),
    Column("scoring_signature", "mixed", "str", "as in answers"),
)

SUMMARY = (
    Column("model", "always", "str", "as in answers"),
    Column("condition", "always", "str", "as in answers"),
    Column("template_id", "always", "int", "as in answers"),
    Column(
        "n_samples",
        "samples",
        "int",
        "samples per instance; the metrics below are means over the samples' own summaries, the counts (`n_...`) sums",
    ),
    Column(
        "<metric>_sample_sd",
        "samples",
        "as the metric",
        "SD (ddof 1) of the metric across samples (not across concept sets); NaN with one sample",
    ),
    Column("n_answers", "always", "int", "answers of this model, condition and template"),
    Column("n_groups", "always", "int", "groups of them"),
    Column("n_<flag>", "always", "int", "answers with each flag"),
    Column("coverage_wo_order", "coverage", "% 0-100", "w/o order: answers with every concept"),
    Column(
        "coverage_w_order",
        "coverage",
        "% 0-100",
        "w/ order: answers with every concept in the asked order",
    ),
    Column(
        "ordered_rate",
        "coverage",
        "% 0-100",
        "Ordered Rate: in order / all present (pooled over templates in tables)",
    ),
    Column(
        "pos_coverage_wo_order",
        "coverage",
        "% 0-100",
        "PoS w/o order: answers with every concept as its part of speech",
    ),
    Column(
        "pos_coverage_w_order", "coverage", "% 0-100", "PoS w/ order: the same, in the asked order"
    ),
    Column("coverage_per_concept", "coverage", "% 0-100", "Lin et al.'s per-concept coverage"),
    Column(
        "n_all_present",
        "coverage",
        "int",
        "answers with every concept (Ordered Rate's denominator)",
    ),
    Column("n_in_order", "coverage", "int", "answers in order (its numerator)"),
    Column("pbleu", "pbleu", "BLEU 0-100", "mean of the groups' pBLEU"),
    Column(
        "distinct_2",
        "distinct",
        "% 0-100",
        "Distinct-2 as the paper reports it: the per-answer form, averaged",
    ),
    Column(
        "distinct_2_pooled",
        "distinct",
        "% 0-100",
        "unique / total bigrams over all answers (the paper's formula as written)",
    ),
    Column("diverse_rate", "diverse", "% 0-100", "mean of the groups' Diverse Rate"),
    Column("pbleurt", "pbleurt", "BLEURT x 100", "mean of the groups' pBLEURT"),
    Column("perplexity", "perplexity", "perplexity", "arithmetic mean over answers (the paper's)"),
    Column(
        "n_ppl_unscored", "perplexity", "int", "answers without a perplexity (under two tokens)"
    ),
    Column(
        "perplexity_median",
        "perplexity",
        "float",
        "the median perplexity of the answers (the mean is `perplexity`): shown beside every mean",
    ),
    Column(
        "pbleu_missing_reason",
        "groups of one",
        "str",
        "why pBLEU has no value: every group holds one answer (`permutations: 1`)",
    ),
    Column(
        "diverse_rate_missing_reason",
        "groups of one",
        "str",
        "why Diverse Rate has no value: every group holds one answer (`permutations: 1`; one answer would read as 100)",
    ),
    Column(
        "pbleurt_missing_reason",
        "pbleurt missing",
        "str",
        "why pBLEURT is missing (no checkpoint here, or groups of one answer)",
    ),
    Column("slor", "slor", "nats per token", "SLOR, mean over the answers scored"),
    Column("slor_median", "slor", "nats per token", "SLOR, median over the answers scored"),
    Column("nonword_rate", "nonword", "% 0-100", "answers holding a non-word"),
    Column(
        "perplexity_missing_reason",
        "perplexity missing",
        "str",
        "why perplexity is missing (GPT2-XL not here and no fallback chosen)",
    ),
    Column("vendi", "semantic", "Vendi score", "mean of the groups' Vendi score"),
    Column(
        "pairwise_cosine",
        "semantic",
        "cosine x 100",
        "mean of the groups' mean pairwise cosine, x 100",
    ),
    Column(
        "semantic_missing_reason",
        "semantic missing",
        "str",
        "why the Vendi score and pairwise cosine are missing (no embedding model in the local cache)",
    ),
    Column(
        "judge_score", "judge", "score 1-5", "mean of the judge's ratings over the judged answers"
    ),
    Column(
        "judge_in_order", "judge", "% 0-100", "judged answers the judge reads in the asked order"
    ),
    Column(
        "n_judge_order_disagreements",
        "judge and coverage",
        "int",
        "judged answers where the judge's order verdict differs from `in_order`",
    ),
    Column(
        "judge_missing_reason",
        "judge missing",
        "str",
        "why the judge's metrics are missing (no judge in the run file)",
    ),
    Column(
        "slor_missing_reason", "slor missing", "str", "why SLOR is missing (no perplexity model)"
    ),
    Column("scoring_signature", "mixed", "str", "as in answers"),
)


TABLES = {"answers": ANSWERS, "groups": GROUPS, "summary": SUMMARY}
HEADER = "| column | when | type, unit | what |\n|---|---|---|---|\n"


def markdown(table: str) -> str:
    """The table's rows as docs/DATA.md shows them."""
    return HEADER + "".join(
        f"| `{c.name}` | {c.when} | {c.kind} | {c.what} |\n" for c in TABLES[table]
    )


def _table_span(text: str, table: str) -> tuple[int, int]:
    """Where the frame's markdown table lies in DATA.md (its header to its last row)."""
    section = text.index(f"## {table}\n")
    start = text.index(HEADER, section)
    match = re.compile(r"(?:\|[^\n]*\n)+").match(text, start)
    return start, match.end()


def current_text(text: str) -> str:
    """DATA.md's text with its three frame tables as generated from TABLES."""
    for table in TABLES:
        start, end = _table_span(text, table)
        text = text[:start] + markdown(table) + text[end:]
    return text


if __name__ == "__main__":  # a developer's command: rewrite docs/DATA.md's frame tables
    path = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[2] / "docs" / "DATA.md"
    )
    path.write_text(current_text(path.read_text(encoding="utf-8")), encoding="utf-8")
