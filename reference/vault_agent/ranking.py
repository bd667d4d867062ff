"""Ranking for search and related: BM25 over the FTS5 table (lexical), cosine distance over the
sqlite-vec table (embedding) and reciprocal rank fusion of the two (hybrid), each a list of
(entry rowid, score) pairs with scores in 0..1, best first, and the vector a related query
starts from. Core inherits these steps from Ranker and turns the ranked rows into results.
"""

from __future__ import annotations

import math
import re
import struct

from .embedding import Model

RRF_K = 60
TOKEN = re.compile(r"\w+")


class Ranker:
    """The ranking steps of Core's search and related."""

    def _lexical(self, conn, text: str, n: int, *, skip_note: str | None = None,
                 skip_row: int | None = None, max_terms: int = 64) -> list[tuple[int, float]]:
        terms = list(dict.fromkeys(TOKEN.findall(text.casefold())))[:max_terms]
        if not terms:
            return []
        expression = " OR ".join(f'"{term}"' for term in terms)
        sql = ("SELECT e.rowid, bm25(fts, 10.0, 5.0, 5.0, 3.0, 1.0) AS r FROM fts JOIN entries e ON e.rowid = fts.rowid "
               "WHERE fts MATCH ? AND e.note_id != ? AND e.rowid != ? ORDER BY r, e.rowid LIMIT ?")
        rows = conn.execute(sql, (expression, skip_note or "", skip_row or -1, n)).fetchall()
        if not rows:
            return []
        best = rows[0][1] or -1e-9
        return [(rowid, max(0.0, min(1.0, rank / best)) if best < 0 else 1.0) for rowid, rank in rows]

    @staticmethod
    def _vector(conn, vector: list[float] | None, n: int, skip: set[int]) -> list[tuple[int, float]]:
        if vector is None:
            return []
        rows = conn.execute("SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
                            (struct.pack(f"{len(vector)}f", *vector), n + len(skip))).fetchall()
        rows.sort(key=lambda row: (row[1], row[0]))  # ties in rowid order, for repeatable results
        return [(rowid, max(0.0, min(1.0, 1.0 - dist / 2.0))) for rowid, dist in rows if rowid not in skip][:n]

    @staticmethod
    def _fuse(lists: list[list[tuple[int, float]]], n: int) -> list[tuple[int, float]]:
        scores: dict[int, float] = {}
        for ranked in lists:
            for position, (rowid, _score) in enumerate(ranked, 1):
                scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (RRF_K + position)
        best = len(lists) / (RRF_K + 1)
        ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:n]
        return [(rowid, score / best) for rowid, score in ordered]

    def _rank(self, conn, mode: str, text: str, vector: list[float] | None, n: int, *,
              skip_note: str | None = None, skip_rows: set[int] | None = None,
              max_terms: int = 64) -> list[tuple[int, float]]:
        skip_rows = skip_rows or set()
        skip_row = next(iter(skip_rows)) if len(skip_rows) == 1 and skip_note is None else None
        if mode == "lexical":
            return self._lexical(conn, text, n, skip_note=skip_note, skip_row=skip_row, max_terms=max_terms)
        if mode == "embedding":
            return self._vector(conn, vector, n, skip_rows)
        wide = n * 3
        return self._fuse([self._lexical(conn, text, wide, skip_note=skip_note, skip_row=skip_row, max_terms=max_terms),
                           self._vector(conn, vector, wide, skip_rows)], n)

    @staticmethod
    def _source_vector(conn, model: Model | None, rowids: list[int], text: str) -> list[float] | None:
        if model is None:
            return None
        total = [0.0] * model.dimension
        found = False
        for rowid in rowids:
            blob = conn.execute("SELECT embedding FROM vec WHERE rowid = ?", (rowid,)).fetchone()
            if blob is not None:
                found = True
                for i, value in enumerate(struct.unpack(f"{model.dimension}f", blob[0])):
                    total[i] += value
        if not found:
            return model.embed(text)
        norm = math.sqrt(sum(v * v for v in total))
        return [v / norm for v in total] if norm else None
