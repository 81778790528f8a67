"""The backends behind one registry by name (ocg/generation/backends/__init__.py): the models
file's vocabulary names exactly them, and an entry's backend is looked up there."""

from ocg.config.model_registry import parse_models
from ocg.config.models_file import BACKENDS as NAMED
from ocg.generation.backends import BACKENDS, backend_class, make_backend, make_prompts
from ocg.generation.backends.batch_auto import BatchSize
from ocg.generation.backends.chat import MessagePrompts
from ocg.generation.backends.constrained import grammar_backends
from ocg.generation.backends.replay_backend import ReplayBackend


def test_the_models_files_backends_are_the_registrys():
    assert tuple(BACKENDS) == NAMED
    assert grammar_backends() == ["transformers", "openai"]  # what their classes say


def test_an_entry_gets_the_backend_its_name_looks_up():
    spec = parse_models(
        {"models": {"r": {"backend": "replay", "id": "x", "system_mode": "folded"}}}, "f"
    )["r"]
    assert backend_class(spec) is ReplayBackend
    prompts = make_prompts(spec)
    assert type(prompts) is MessagePrompts and prompts.system_mode == "folded"
    backend = make_backend(spec, BatchSize(5), sampling={"temperature": 1.0, "top_p": 1.0})
    assert type(backend) is ReplayBackend and backend.batch_size == 5
    assert backend.sampling == {"temperature": 1.0, "top_p": 1.0}
