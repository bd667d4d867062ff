"""The local embedding model: a JSON file the user points `embedding.model` at. Nothing is
ever downloaded.

Format (`vault-agent-embedding-model/1`):

    {"format": "vault-agent-embedding-model/1",
     "dimension": 4,
     "vocabulary": ["alpha", "beta", ...],          # unique tokens
     "vectors": [[0.1, 0.0, 0.3, 0.2], ...]}        # one row of `dimension` numbers per token

A text's embedding is the sum of the rows of its tokens (lower-cased `\\w+` runs; unknown
tokens add nothing), scaled to unit length; a text with no known token has no embedding.
The model's identity is the SHA-256 of the file's bytes, so editing the file in place counts
as a new model (and makes an index built with the old one incompatible).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

FORMAT = "vault-agent-embedding-model/1"
MAX_DIMENSION = 4096
MAX_INPUT_CHARS = 8000  # indexing.md#embedding-provider
_TOKEN = re.compile(r"\w+")


class ModelUnavailable(Exception):
    """The configured model file is missing or malformed (the message holds no path)."""


@dataclass(frozen=True)
class Model:
    identity: str
    dimension: int
    rows: dict[str, tuple[float, ...]]

    def embed(self, text: str) -> list[float] | None:
        total = [0.0] * self.dimension
        hit = False
        for token in _TOKEN.findall(text[:MAX_INPUT_CHARS].casefold()):
            row = self.rows.get(token)
            if row is not None:
                hit = True
                for i, value in enumerate(row):
                    total[i] += value
        norm = math.sqrt(sum(v * v for v in total))
        if not hit or norm == 0.0:
            return None
        return [v / norm for v in total]


def load_model(path: Path) -> Model:
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError):
        raise ModelUnavailable("the embedding model file cannot be read as JSON") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ModelUnavailable(f"the embedding model file is not in the {FORMAT} format")
    dimension, vocabulary, vectors = data.get("dimension"), data.get("vocabulary"), data.get("vectors")
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= MAX_DIMENSION:
        raise ModelUnavailable("the embedding model dimension must be an integer from 1 to 4096")
    if not isinstance(vocabulary, list) or not isinstance(vectors, list) or len(vocabulary) != len(vectors):
        raise ModelUnavailable("the embedding model needs one vector per vocabulary entry")
    rows: dict[str, tuple[float, ...]] = {}
    for token, vector in zip(vocabulary, vectors):
        if not isinstance(token, str) or token.casefold() != token or token in rows:
            raise ModelUnavailable("vocabulary entries must be unique lower-case strings")
        if not isinstance(vector, list) or len(vector) != dimension or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vector):
            raise ModelUnavailable("every vector must hold `dimension` finite numbers")
        rows[token] = tuple(float(v) for v in vector)
    return Model(hashlib.sha256(raw).hexdigest()[:32], dimension, rows)


def embedding_text(title: str, heading_path: list[str], content: str) -> str:
    return "\n".join(part for part in (title, " / ".join(heading_path), content) if part)


def write_model(path: Path, rows: dict[str, list[float]]) -> Path:
    """Write a model file in FORMAT from token -> vector rows (for tests and benchmarks that
    build an honest model from data they make)."""
    dimension = len(next(iter(rows.values())))
    path.write_text(json.dumps({"format": FORMAT, "dimension": dimension, "vocabulary": list(rows),
                                "vectors": [list(vector) for vector in rows.values()]}), encoding="utf-8")
    return path
