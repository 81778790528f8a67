"""The Ordered CommonGen dataset: concept sets, permutations, templates, instances."""

from .build import build_dataset, dataset_name, load_dataset
from .concepts import Concept, ConceptSet, load_concept_sets, read_concept_sets, select_covering_subset
from .instances import build_instances, content_hash, ids_hash, instance_id
from .templates import DEFAULT_CONDITIONS, GENERATE_CONDITIONS, TemplateConfig, load_templates

__all__ = [
    "DEFAULT_CONDITIONS", "GENERATE_CONDITIONS", "Concept", "ConceptSet", "TemplateConfig", "build_dataset",
    "build_instances", "content_hash", "dataset_name", "ids_hash", "instance_id",
    "load_concept_sets", "load_dataset", "load_templates", "read_concept_sets",
    "select_covering_subset",
]
