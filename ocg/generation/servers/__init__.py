"""Inference servers started for a run (vLLM, SGLang, TGI, llama.cpp, transformers serve)
and what they answer while starting."""
