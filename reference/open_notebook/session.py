"""Session state, in memory only: the active collection and the session's result streams.

A stdio process serves one session. Over Streamable HTTP a session is one Mcp-Session-Id;
a request without one (stateless serving) gets a fresh state that lives for that request.
Nothing here is ever written anywhere.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_OPEN_STREAMS = 64  # per session; the oldest is closed when a new one would exceed it
MAX_REMEMBERED_TOKENS = 256  # closed or expired tokens kept to name the right error
MAX_HTTP_SESSIONS = 1024  # the least recently used state is dropped (it then starts SAFE again)


@dataclass
class Stream:
    token: str
    collection_id: str
    query: str
    created_at: int  # Unix seconds, as reported
    expires_at: float  # time.monotonic() deadline
    chunks: list[dict[str, Any]]  # (chunk_type, payload, what_changed, why) bodies, pre-computed
    total_references: int
    position: int = 0


@dataclass
class Session:
    has_session: bool = True  # False for a sessionless HTTP request: it cannot hold a context
    active: str | None = None
    streams: OrderedDict[str, Stream] = field(default_factory=OrderedDict)
    ended: OrderedDict[str, str] = field(default_factory=OrderedDict)  # token -> "closed" | "expired"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self, collection_id: str) -> None:
        """Replace the context; streams of the previous context end with it."""
        for token in list(self.streams):
            self.end(token, "closed")
        self.active = collection_id

    def add_stream(self, stream: Stream) -> None:
        while len(self.streams) >= MAX_OPEN_STREAMS:
            self.end(next(iter(self.streams)), "closed")
        self.streams[stream.token] = stream

    def end(self, token: str, reason: str) -> None:
        self.streams.pop(token, None)
        self.ended[token] = reason
        while len(self.ended) > MAX_REMEMBERED_TOKENS:
            self.ended.popitem(last=False)

    def expired(self, stream: Stream) -> bool:
        return time.monotonic() >= stream.expires_at


class SessionStore:
    """Session states by key; `None` means no session."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str | None) -> Session:
        if key is None:
            return Session(has_session=False)
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = Session()
                while len(self._sessions) > MAX_HTTP_SESSIONS:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(key)
            return session

    def drop(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)
