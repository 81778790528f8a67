"""`tiny_lm`: a tiny GPT-2 built once per module, for the perplexity and SLOR tests."""

import pytest

from tests.metrics.tiny_gpt2 import build_tiny_gpt2


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))
