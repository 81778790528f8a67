"""The numbered notebooks' names (notebooks/), spelled here alone: the plan that runs them
(ocg/jobs/plan.py), the run-file checks, the help texts and the landing page's links use these.

On the foundation floor, so the analysis modules that link a notebook can import them too.
"""

BUILD_DATA, GENERATE, SCORE = "00_build_data", "01_generate", "02_score"
MODEL_NOTEBOOKS = (GENERATE, SCORE)
MAIN_RESULTS, POS_PATTERNS, TEMPLATES, PRIMING = (
    "03_main_results",
    "04_pos_patterns",
    "05_templates",
    "06_priming",
)
REASONING_MODELS, CONCEPT_DIFFICULTY, CASES = (
    "07_reasoning_models",
    "08_concept_difficulty",
    "09_cases",
)
POSITIONS, SAMPLES, FORCING_ORDER = "10_positions", "11_samples", "12_forcing_order"
ANALYSES = (
    MAIN_RESULTS,
    POS_PATTERNS,
    TEMPLATES,
    PRIMING,
    REASONING_MODELS,
    CONCEPT_DIFFICULTY,
    CASES,
    POSITIONS,
    SAMPLES,
    FORCING_ORDER,
)


def span(notebooks) -> str:
    """'NN-MM': the numbers of the first and last of `notebooks`, for texts that name a range
    (help, job scripts), so no text says a range the plan does not run."""
    first, last = notebooks[0][:2], notebooks[-1][:2]
    return first if first == last else f"{first}-{last}"


ANALYSES_SPAN, ALL_SPAN = span(ANALYSES), span((BUILD_DATA, *ANALYSES))
