"""Generation: any instruction-tuned model over the instances (transformers or an OpenAI-style API)."""

from .extraction import extract_answer
from .run import generate, plan_batches
from .selection import select_instances
from .store import GenerationStore, read_generations

__all__ = ["GenerationStore", "extract_answer", "generate", "plan_batches",
           "read_generations", "select_instances"]
