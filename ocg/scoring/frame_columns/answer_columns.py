"""The answers frame's columns: one row per answer."""

from __future__ import annotations

from .column import Column

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
        "pos_matched",
        "coverage",
        "list of int",
        "per concept: the tokens that match it (ocg's rule)",
    ),
    Column(
        "pos_tagged",
        "coverage",
        "list of int",
        "per concept: of those, the tokens spaCy tags with the concept's part of speech",
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
        'SLOR: the perplexity model\'s log probability minus the unigram (wordfreq) log probability of the same tokens, per token; a word wordfreq does not list earns no credit (METHODS, "Acceptability"); NaN where perplexity is',
    ),
    Column(
        "slor_per_word",
        "slor",
        "nats per word",
        "SLOR normalised per word with a scored token instead of per LM token (a sensitivity variant)",
    ),
    Column(
        "slor_oov_floor",
        "slor",
        "nats per token",
        "SLOR with a word wordfreq does not list at frequency 1e-9, the former rule that credits it (a sensitivity variant)",
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
    Column(
        "judge_reason",
        "judge",
        "str or None",
        'why the answer is unjudged: empty answer, the answer carries a verdict, error: <the failed request>, refused, too long, restates the answer, unparsed, not an integer, out of range, order not of the concepts; None where judged (METHODS, "LLM judge")',
    ),
    Column("scoring_signature", "mixed", "str", "a short hash of how the model was scored"),
)
