"""The reference's embedded index: hashed bag-of-words vectors with TF-IDF weights, cosine
similarity, one index per collection, built in memory at start-up.

A lexical method, stated plainly: two texts are near when they share words, weighted so rare
words count more. It knows no synonyms and no meaning. It is deterministic (no randomness,
Python's salted hash() is not used), needs no external service and downloads nothing.

Text -> tokens: Unicode NFKC, case-folded, maximal runs of word characters (regex \\w+).
Token -> dimension: the first 8 bytes of BLAKE2b(token) as an unsigned big-endian integer;
its value modulo 2**20 is the dimension and its bit 63 the sign (signed feature hashing).
Weights: (1 + ln tf) * (ln((1 + N) / (1 + df)) + 1), N and df counted over the passages of
the same collection only, so no other collection influences a ranking. Vectors are
L2-normalised; the score is their dot product (cosine), rounded to 6 decimals.
Ranking: rounded score descending, then notebook id, page and ordinal ascending. A passage
matches when its score exceeds 0.0000005, i.e. when its rounded score is above zero.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

DIMENSIONS = 1 << 20
MATCH_THRESHOLD = 5e-7  # above it, the score rounded to 6 decimals is above zero
_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def feature(token: str) -> tuple[int, float]:
    value = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big")
    return value % DIMENSIONS, (-1.0 if value >> 63 else 1.0)


@dataclass(frozen=True)
class Hit:
    index: int  # position of the passage in the sequence the index was built from
    score: float


class Index:
    """Sparse vectors of a collection's passages with an inverted list per dimension.

    Passages must be given in ranking-tie order (notebook id, page, ordinal): ties on the
    rounded score go to the lower position.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        counts = [Counter(tokens(text)) for text in texts]
        self.size = len(texts)
        df: Counter[str] = Counter()
        for count in counts:
            df.update(count.keys())
        self._idf = {token: math.log((1 + self.size) / (1 + n)) + 1 for token, n in df.items()}
        postings: dict[int, tuple[list[int], list[float]]] = {}
        for index, count in enumerate(counts):
            for dim, value in self._vector(count).items():
                positions, values = postings.setdefault(dim, ([], []))
                positions.append(index)
                values.append(value)
        self._postings = postings

    def _weight(self, token: str, tf: int) -> float:
        idf = self._idf.get(token, math.log(1 + self.size) + 1)
        return (1 + math.log(tf)) * idf

    def _vector(self, count: Counter[str]) -> dict[int, float]:
        vector: dict[int, float] = {}
        for token in sorted(count):  # fixed summation order
            dim, sign = feature(token)
            vector[dim] = vector.get(dim, 0.0) + sign * self._weight(token, count[token])
        norm = math.sqrt(sum(v * v for v in vector.values()))
        return {dim: v / norm for dim, v in vector.items() if v} if norm else {}

    def embed_query(self, text: str) -> dict[int, float]:
        return self._vector(Counter(tokens(text)))

    def search(self, text: str, k: int) -> tuple[list[Hit], int]:
        """The best `k` passages with a score above zero, and how many scored above zero."""
        scores = [0.0] * self.size
        for dim, q in sorted(self.embed_query(text).items()):
            positions, values = self._postings.get(dim, ((), ()))
            for index, value in zip(positions, values):
                scores[index] += q * value
        matches = [i for i, score in enumerate(scores) if score > MATCH_THRESHOLD]
        by_score = sorted(matches, key=scores.__getitem__, reverse=True)
        if len(by_score) > k > 0:  # keep every passage tied with the k-th once rounded
            cutoff = round(scores[by_score[k - 1]], 6)
            end = k
            while end < len(by_score) and round(scores[by_score[end]], 6) >= cutoff:
                end += 1
            by_score = by_score[:end]
        ranked = sorted(by_score, key=lambda i: (-round(scores[i], 6), i))[:k]
        return [Hit(i, round(scores[i], 6)) for i in ranked], len(matches)
