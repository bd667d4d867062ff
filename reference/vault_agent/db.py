"""SQLite connections with sqlite-vec loaded when possible.

The standard library's sqlite3 is used when it can load extensions; some Python builds
cannot, and then pysqlite3 (a drop-in DB-API module with its own SQLite) is used. If neither
can load sqlite-vec, embedding search is unavailable and lexical search still works
(indexing.md#index-storage).
"""

from __future__ import annotations

import functools
import sqlite3 as _stdlib
from types import ModuleType


def _module() -> ModuleType:
    probe = _stdlib.connect(":memory:")
    try:
        if hasattr(probe, "enable_load_extension"):
            return _stdlib
    finally:
        probe.close()
    try:
        from pysqlite3 import dbapi2  # type: ignore[import-not-found]
    except ImportError:
        return _stdlib
    return dbapi2


sqlite3 = _module()


def _load_vec(conn) -> bool:
    try:
        import sqlite_vec  # type: ignore[import-not-found]

        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        return True
    except Exception:  # noqa: BLE001 - any failure means "no vector search", never a crash
        return False


def connect(path: str, *, readonly: bool):
    """(connection, sqlite-vec loaded). Read-only connections never create the database."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    if not readonly:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
    return conn, _load_vec(conn)


@functools.cache
def vec_available() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        return _load_vec(conn)
    finally:
        conn.close()


DatabaseError = sqlite3.DatabaseError
