"""Deliberate defects and correct variants of the reference servers (see _dispatch.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAUNCHERS = {"section-source-local": "launch.py", "retrieval-tools": "launch_retrieval_tools.py",
             "section-source-hosted": "launch_hosted.py", "open-notebook": "launch_open_notebook.py",
             "vault-agent": "launch_vault_agent.py"}
REFERENCE_MODULE = "{python} -m reference.vault_agent"


def registry():
    """Every mutant and variant, by name (importing the launchers registers them)."""
    from tests.mutants import (_dispatch, launch, launch_hosted, launch_open_notebook,  # noqa: F401
                               launch_retrieval_tools, launch_vault_agent)
    return dict(_dispatch.REGISTRY)


def command(m) -> str:
    """The suite's --server-cmd for a mutant or variant."""
    launcher = shlex.quote(str(HERE / LAUNCHERS[m.profile]))
    if m.profile == "vault-agent":
        from contract_tests import contracts
        return _through(m, contracts.load_profile(m.profile).reference_command(m.transport or "stdio"))
    if m.profile == "retrieval-tools":
        return f"{{python}} {launcher} {m.name}"
    if m.profile == "section-source-hosted":
        return f"{{python}} {launcher} {m.name} --port {{port}} --phase {{phase}}"
    if m.profile == "open-notebook":
        http = " --http --port {port}" if m.transport == "http" else ""
        return f"{{python}} {launcher} {m.name} --notebooks {{notebooks}} --stream-timeout {{stream_timeout_s}}{http}"
    http = " --http --port {port}" if m.transport == "http" else ""
    return f"{{python}} {launcher} {m.name} --vault {{vault}}{http}"


def suite_args(m, phase: str | None = None) -> list[str]:
    """--profile, and --transport or --phase, for a mutant or variant."""
    args = ["--profile", m.profile]
    if m.transport:
        args += ["--transport", m.transport]
    if m.profile == "section-source-hosted":
        args += ["--phase", phase or (m.phases[0] if m.phases else "1L")]
    if m.profile == "vault-agent":  # every command of the profile goes through the launcher
        from contract_tests import contracts
        for role, template in contracts.load_profile(m.profile).reference_commands().items():
            args += ["--rc-command", f"{role}={_through(m, template)}"]
    return args + list(m.options)


def _through(m, template: str) -> str:
    """A reference command template with the launcher (and the mutant's name) in place of the
    reference module."""
    return template.replace(REFERENCE_MODULE, f"{{python}} {shlex.quote(str(HERE / LAUNCHERS[m.profile]))} {m.name}")
