"""Generation: any instruction-tuned model over the instances (transformers or an OpenAI-style API),
or answers written before (replay).

Names load on first use (PEP 562), so importing the transformers backend or invariance does not import
pandas: benchmarks/gpu_check.py runs with torch and transformers alone.
"""

import importlib

_EXPORTS = {
    "GenerationStore": "answer_store.store",
    "extract_answer": "extraction",
    "generate": "run_generation",
    "generate_request": "run_generation",
    "plan_batches": "invariance",
    "read_generations": "answer_store.store",
    "select_instances": "selection",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
