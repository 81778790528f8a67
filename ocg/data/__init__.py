"""The Ordered CommonGen dataset: concept sets, permutations, templates, instances.

Names load on first use (PEP 562), so importing one submodule (concepts, templates) does not
import pandas: benchmarks/gpu_check.py runs with torch and transformers alone.
"""

import importlib

_EXPORTS = {
    "build_dataset": "build",
    "DataInputs": "build",
    "dataset_name": "build",
    "load_dataset": "build",
    "Concept": "concepts",
    "ConceptSet": "concepts",
    "load_concept_sets": "concepts",
    "read_concept_sets": "concepts",
    "select_covering_subset": "concepts",
    "build_instances": "instances",
    "content_hash": "instances",
    "ids_hash": "instances",
    "instance_id": "instances",
    "DEFAULT_CONDITIONS": "templates",
    "GENERATE_CONDITIONS": "templates",
    "TemplateConfig": "templates",
    "load_templates": "templates",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
