"""Scan server output for canary tokens, and redact what a report may show."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Leak:
    cls: str
    channel: str
    excerpt: str
    request_id: Any = None  # the id of the response that carried it (protocol output), if any

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


def redact_all(text: str, tokens: dict[str, str]) -> str:
    """Every canary token in `text` replaced by <CANARY:class> (case-insensitive)."""
    for cls, token in tokens.items():
        text = re.sub(re.escape(token), f"<CANARY:{cls}>", text, flags=re.IGNORECASE)
    return text


def scan_text(text: str, tokens: dict[str, str], channel: str, classes: Iterable[str]) -> list[Leak]:
    lowered = text.lower()
    return [Leak(cls, channel, redact(text, tokens)) for cls in classes if tokens[cls] in lowered]


def holds_none(text: str, wanted: Iterable[str]) -> bool:
    """True when `text` can carry none of the `wanted` tokens, however deep in JSON-in-JSON: none
    is in it literally, and it has no `\\u` escape that could spell one (a token is letters and
    digits, which no other JSON escape produces). Then the slow, decoding scan is not needed."""
    lowered = text.lower()
    return "\\u" not in lowered and not any(token in lowered for token in wanted)


def scan_lines(lines: Iterable[str], tokens: dict[str, str], channel: str,
               classes: Iterable[str]) -> list[Leak]:
    """Scan raw lines and the decoded strings of JSON lines (escapes cannot hide a token)."""
    classes = list(classes)
    wanted = [tokens[cls] for cls in classes]
    leaks: dict[tuple[str, str], Leak] = {}
    for line in lines:
        if holds_none(line, wanted):
            continue
        texts = [line]
        try:
            texts.extend(strings(json.loads(line)))
        except ValueError:
            pass
        for text in texts:
            for leak in scan_text(text, tokens, channel, classes):
                leaks.setdefault((leak.cls, leak.channel), leak)
    return list(leaks.values())


def response_channel(message: Any) -> str:
    """Which output channel a server message belongs to: `errors` (a JSON-RPC error or an
    isError tool result), `results` (any other response) or `notices` (requests and
    notifications the server sent)."""
    if not isinstance(message, dict):
        return "results"
    if "error" in message:
        return "errors"
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "errors"
    return "results" if "result" in message else "notices"


def scan_output(lines: Iterable[str], tokens: dict[str, str], rules: dict[str, dict[str, str]],
                sent: dict[Any, Any] | None = None, echo_allowed: Iterable[str] = ()) -> list[tuple[str, Leak]]:
    """Scan a server's protocol output (stdout, or HTTP bodies) channel by channel.

    `rules` maps a channel (results, errors) to {canary class: requirement id}. On the
    channels in `echo_allowed`, a token that only appears inside what the caller itself sent
    in that request (`sent`: request id -> params) is not a leak. Returns (requirement, leak)."""
    found: dict[tuple[str, str], tuple[str, Leak]] = {}
    echo_allowed = set(echo_allowed)
    for line, message in _messages(lines):
        channel = response_channel(message) if message is not None else "results"
        classes = rules.get(channel, {})
        if not classes or holds_none(line, [tokens[cls] for cls in classes]):
            continue
        texts = [line] if message is None else list(strings(message))
        if channel in echo_allowed and isinstance(message, dict) and sent:
            params = sent.get(message.get("id"))
            own = [f for t in strings(params) for f in path_forms(t) if len(f) >= 6] if params is not None else []
            if own:
                texts = [_without(t, own) for t in texts]
        request_id = message.get("id") if isinstance(message, dict) else None
        for text in texts:
            for leak in scan_text(text, tokens, channel, classes):
                found.setdefault((leak.cls, channel), (classes[leak.cls], replace(leak, request_id=request_id)))
    return list(found.values())


def path_forms(text: str) -> set[str]:
    """A string the caller sent, and the same path normalised the way a server may echo it:
    empty and `.` segments (`//`, `./`) and a trailing slash removed. `..` is kept: a path
    resolved through it (or through a symlink, or the root's real path) is not the caller's."""
    if "/" not in text:
        return {text}
    kept = "/".join(seg for seg in text.split("/") if seg not in ("", "."))
    return {text, ("/" if text.startswith("/") else "") + kept}


def _without(text: str, parts: list[str]) -> str:
    for part in sorted(parts, key=len, reverse=True):
        text = text.replace(part, " ")
    return text


def _messages(lines: Iterable[str]) -> Iterable[tuple[str, Any]]:
    """(text, parsed JSON-RPC message or None) for each output line; an SSE body (HTTP) gives
    one entry per `data:` message."""
    for line in lines:
        try:
            yield line, json.loads(line)
            continue
        except ValueError:
            pass
        data = [chunk[5:].strip() for chunk in line.splitlines() if chunk.startswith("data:")]
        parsed = []
        for chunk in data:
            try:
                parsed.append(json.loads(chunk))
            except ValueError:
                parsed = []
                break
        if parsed:
            for message in parsed:
                yield json.dumps(message), message
        else:
            yield line, None
