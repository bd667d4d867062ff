"""Reading what a server writes without ever holding more of it than the limits allow.

A pipe is read in chunks and split into lines here, not by Python's line iterator, which would
hold a whole 1 GB line in memory. A line longer than its cap is never assembled: its first
`evidence_bytes` are kept as evidence, the rest is only counted and searched for the fixture's
canary tokens as it streams past (a token split between two chunks is still found), and the
caller gets an `Oversize` record in place of the line.
"""

from __future__ import annotations

import os
import re
import select
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from contract_tests.transport.limits import LIMITS

CHUNK = 64 * 1024
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})')


@dataclass
class Oversize:
    """A message over the size limit: how long it was, its first bytes, and excerpts around
    every canary token found anywhere in it."""
    size: int
    limit: int
    prefix: bytes
    excerpts: list[str] = field(default_factory=list)
    ended: bool = True   # False: the stream closed before the line ended (a message cut off)

    def request_id(self):
        """The JSON-RPC id, if the kept prefix names one (servers write it before the result)."""
        import json
        match = _ID.search(self.prefix)
        if not match:
            return None
        try:
            return json.loads(match.group(1))
        except ValueError:
            return None

    def text(self) -> str:
        """One transcript line standing for the message: what it was, its start, and any
        canary excerpts (the canary guard scans this line like any other)."""
        head = (f"[retrieval-contract: a message of {self.size:,} bytes"
                f"{'' if self.ended else ' (cut off: the stream closed before it ended)'}, over the "
                f"{self.limit:,}-byte limit; its first {len(self.prefix):,} bytes follow]")
        body = self.prefix.decode("utf-8", "replace")
        tail = "".join(f" [... excerpt: {e}]" for e in self.excerpts)
        return f"{head} {body}{tail}"


class _Watch:
    """Finds tokens in a stream fed piece by piece (lowercased, like the canary scan)."""

    def __init__(self, tokens: Iterable[bytes], excerpt: int = 120) -> None:
        self.tokens = [t for t in tokens if t]
        self.overlap = max((len(t) for t in self.tokens), default=1) - 1 + excerpt
        self.excerpt = excerpt
        self.tail = b""
        self.found: dict[bytes, str] = {}

    def feed(self, piece: bytes) -> None:
        if not self.tokens or len(self.found) == len(self.tokens):
            return
        window = self.tail + piece
        lowered = window.lower()
        for token in self.tokens:
            if token in self.found:
                continue
            at = lowered.find(token)
            if at >= 0:
                start = max(0, at - self.excerpt)
                self.found[token] = window[start:at + len(token) + self.excerpt].decode("utf-8", "replace")
        self.tail = window[-self.overlap:] if self.overlap else b""


def chunks_of(fd: int, stop: threading.Event | None = None) -> Iterable[bytes]:
    """A file descriptor's bytes, one read of at most CHUNK at a time, to its end; given `stop`,
    only until it is set (a process left behind by a command may hold a pipe open for ever)."""
    poller = select.poll() if stop is not None else None
    if poller is not None:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while stop is None or not stop.is_set():
        if poller is not None and not poller.poll(100):
            continue
        try:
            chunk = os.read(fd, CHUNK)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


def read_lines(source: int | Iterable[bytes], cap: Callable[[], int], on_line: Callable[[bytes], None],
               on_oversize: Callable[[Oversize], None], tokens: Callable[[], list[bytes]],
               blank_lines: bool = False) -> None:
    """Read `source` (a file descriptor, or an iterable of byte chunks) to its end, calling
    `on_line(bytes)` per line (without its line end) and `on_oversize(record)` for a line longer
    than `cap()` bytes. Memory stays within about cap() + evidence_bytes + one chunk, whatever
    the stream holds."""
    buf = bytearray()
    big: tuple[bytearray, int, _Watch] | None = None  # (prefix, size, watch) of a line over the cap

    def finish(ended: bool) -> None:
        nonlocal big
        if big is not None:
            prefix, size, watch = big
            on_oversize(Oversize(size, cap(), bytes(prefix), list(watch.found.values()), ended))
            big = None
        elif buf or not ended or blank_lines:
            on_line(bytes(buf).rstrip(b"\r"))
        buf.clear()

    for chunk in chunks_of(source) if isinstance(source, int) else source:
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:end if end >= 0 else len(chunk)]
            if big is None and len(buf) + len(piece) > cap():
                watch = _Watch(tokens())
                watch.feed(bytes(buf))
                big = (bytearray(buf[:LIMITS.evidence_bytes]), len(buf), watch)
                buf.clear()
            if big is None:
                buf += piece
            else:
                prefix, size, watch = big
                if len(prefix) < LIMITS.evidence_bytes:
                    prefix += piece[:LIMITS.evidence_bytes - len(prefix)]
                watch.feed(piece)
                big = (prefix, size + len(piece), watch)
            if end < 0:
                break
            finish(True)
            start = end + 1
    if buf or big is not None:
        finish(False)
