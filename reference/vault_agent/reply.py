"""The Reply every core operation returns: the HTTP `data` payload and the envelope's warnings.
HTTP (and the CLI) send its `envelope()` ({data, warnings}), MCP its `payload()` ({**data,
warnings}), so both transports carry the same fields by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import cap_warnings


@dataclass
class Reply:
    data: dict[str, Any]
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def envelope(self) -> dict[str, Any]:
        return {"data": self.data, "warnings": cap_warnings(self.warnings)}

    def payload(self) -> dict[str, Any]:
        return {**self.data, "warnings": cap_warnings(self.warnings)}
