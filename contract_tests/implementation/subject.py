"""What a run asks of the implementation under test: its profile, transport and phase, the
command that starts it (or the URL where it runs), its commands by role and mapping, and the
protocol version asked for. Starting, connecting and the preflight read only this; the run's
state (state.py, SuiteState) has it, so those modules need not know the state, and the state
may know the preflight's result."""

from __future__ import annotations

from typing import Any, Protocol

from contract_tests.contracts.specs import Profile


class Subject(Protocol):
    profile: Profile
    transport: str
    phase: str | None
    server_cmd: str | None
    server_url: str | None
    server_path: str
    commands: dict[str, str]
    mapping: dict[str, Any] | None
    mapping_source: str | None
    protocol_version_given: str | None

    @property
    def command(self) -> str:
        """The command that starts the server: --server-cmd, the mapping's, or the reference's."""
        ...
