"""The summary frame's columns: one row per (model, condition, template)."""

from __future__ import annotations

from .column import Column

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
        "pos_tagging",
        "coverage",
        "str (JSON)",
        '{"word_N" or "word_V": [tokens matching the concept, those spaCy tags with its part of speech]}: what PoS-correct coverage rests on',
    ),
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
        "why the Vendi score and pairwise cosine are missing (the embedding model is in no local directory, hub cache or package)",
    ),
    Column(
        "judge_score", "judge", "score 1-5", "mean of the judge's ratings over the judged answers"
    ),
    Column(
        "judge_in_order", "judge", "% 0-100", "judged answers the judge reads in the asked order"
    ),
    Column("n_judged", "judge", "int", "answers the judge judged (`judge_reason` empty)"),
    Column(
        "n_judge_order_disagreements",
        "judge and coverage",
        "int",
        "judged answers where the judge's order verdict differs from `in_order`",
    ),
    Column(
        "n_judge_coverage_disagreements",
        "judge and coverage",
        "int",
        "judged answers where the judge's reading of whether every concept appears differs from `all_present`",
    ),
    Column(
        "n_judge_coverage_both",
        "judge and coverage",
        "int",
        "judged answers the judge reads with every concept (its order lists them all) and ocg finds `all_present`: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_coverage_judge_only",
        "judge and coverage",
        "int",
        "judged answers the judge reads with every concept where ocg finds one missing: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_coverage_ocg_only",
        "judge and coverage",
        "int",
        "judged answers ocg finds `all_present` where the judge's order misses a concept: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_coverage_neither",
        "judge and coverage",
        "int",
        "judged answers both find a concept missing in: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_order_both",
        "judge and coverage",
        "int",
        "judged answers the judge and ocg (`in_order`) both read in the asked order: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_order_judge_only",
        "judge and coverage",
        "int",
        "judged answers the judge reads in the asked order and ocg does not: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_order_ocg_only",
        "judge and coverage",
        "int",
        "judged answers ocg reads in the asked order and the judge does not: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
    ),
    Column(
        "n_judge_order_neither",
        "judge and coverage",
        "int",
        "judged answers neither reads in the asked order: a cell of the 2x2 table behind Cohen's kappa (ocg/scoring/judge_agreement.py)",
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
