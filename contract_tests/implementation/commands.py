"""The implementation's commands by role, run to their end: what a fixture kind is given to
prepare its data (vault-agent's index, open-notebook's load), so that no fixture kind renders
or runs a command of its own.

The profile's spec lists its roles (`commands`); --rc-command ROLE=CMD or the declaration's
`commands` give them. The server under test (--server-cmd) and the servers a test starts are
not run here: implementation/sessions.py starts those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from contract_tests.transport.process import Finished, FixtureSetupError, render_command, run_role


@dataclass(frozen=True)
class Commands:
    """Command templates by role, and the one way they run."""
    templates: Mapping[str, str] = field(default_factory=dict)

    def given(self, role: str) -> bool:
        return bool(self.templates.get(role))

    def template(self, role: str) -> str | None:
        return self.templates.get(role) or None

    def run(self, role: str, values: Mapping[str, str], *, env: Mapping[str, str] | None, cwd: Path,
            timeout: float | None = None) -> Finished:
        """Run `role`'s command with `values` for its placeholders, to its end within `timeout`
        seconds (default --command-timeout). A command not given, one that cannot start and one
        that overran its deadline raise FixtureSetupError (an overrun one is not run again in
        this process); the caller judges its exit status."""
        template = self.template(role)
        if template is None:
            raise FixtureSetupError(f"no {role} command was given (--rc-command {role}=CMD or the declaration's "
                                    "commands)")
        try:
            return run_role(role, render_command(template, dict(values)), command=template, env=env, cwd=cwd,
                            timeout=timeout)
        except OSError as exc:
            raise FixtureSetupError(f"the {role} command could not run: {exc}", command=template) from exc
