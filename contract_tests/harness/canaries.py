"""Scan server output for canary tokens, and redact what a report may show."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

@dataclass(frozen=True)
class Leak:
    cls: str
    channel: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.cls} canary on {self.channel}: {self.excerpt}"


def strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON value, recursing into strings that are JSON themselves."""
    if isinstance(value, str):
        yield value
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) < 5_000_000:
            try:
                inner = json.loads(stripped)
            except ValueError:
                return
            yield from strings(inner)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def redact(text: str, tokens: dict[str, str], around: int = 40) -> str:
    """A short excerpt around the first token, every token replaced by <CANARY:class>."""
    lowered = text.lower()
    hits = [lowered.find(t) for t in tokens.values() if t in lowered]
    start = max(0, min(hits) - around) if hits else 0
    excerpt = text[start:start + 2 * around + 40]
    for cls, token in tokens.items():
        excerpt = re.sub(re.escape(token), f"<CANARY:{cls}>", excerpt, flags=re.IGNORECASE)
    return json.dumps(excerpt, ensure_ascii=True)


def scan_text(text: str, tokens: dict[str, str], channel: str, classes: Iterable[str]) -> list[Leak]:
    lowered = text.lower()
    return [Leak(cls, channel, redact(text, tokens)) for cls in classes if tokens[cls] in lowered]


def scan_lines(lines: Iterable[str], tokens: dict[str, str], channel: str,
               classes: Iterable[str]) -> list[Leak]:
    """Scan raw lines and the decoded strings of JSON lines (escapes cannot hide a token)."""
    classes = list(classes)
    leaks: dict[tuple[str, str], Leak] = {}
    for line in lines:
        texts = [line]
        try:
            texts.extend(strings(json.loads(line)))
        except ValueError:
            pass
        for text in texts:
            for leak in scan_text(text, tokens, channel, classes):
                leaks.setdefault((leak.cls, leak.channel), leak)
    return list(leaks.values())
