"""The seed's request-path normalisation, step for step; nothing here touches the network."""

from __future__ import annotations

import re

from reference.section_source.paths import JS_WHITESPACE

_DRIVE = re.compile(r"^[A-Za-z]:")


class InvalidPath(ValueError):
    """The request path is missing or unsafe. Messages never echo it."""


def normalize_path(raw: object) -> str:
    """Return the normalised vault-relative path, or raise InvalidPath."""
    if not isinstance(raw, str):
        raise InvalidPath("path must be a string")
    text = raw.strip(JS_WHITESPACE).replace("\\", "/")
    if not text:
        raise InvalidPath("path is required")
    if text.startswith("/") or _DRIVE.match(text):
        raise InvalidPath("path must be vault-relative")
    segments = [segment for segment in text.split("/") if segment]
    if ".." in segments:
        raise InvalidPath("path must not contain '..' segments")
    # Only `.` left names the vault root, not a note; and as the URL segment `.` it would
    # collapse to GET /api/v1/notes, the list route.
    if all(segment == "." for segment in segments):
        raise InvalidPath("path is required")
    return "/".join(segments)
