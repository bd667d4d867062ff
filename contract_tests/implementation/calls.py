"""Tool calls on one connection, in the profile's names: the raw call and the request it names,
a success read as the tool's result, a failure read as the profile's structured error. A profile
reads more through a subclass (retrieval-tools' envelope and lists, open-notebook's session)."""

from __future__ import annotations

from typing import Any

from contract_tests.transport.limits import patience
from contract_tests.verdicts.checks import called_ok, short, structured_error, tool_output
from contract_tests.verdicts.findings import Finding, RequirementFailure, describe_call
from contract_tests.verdicts.running import own


def call_wait() -> float:
    """How long a tool call of the checks waits: three request timeouts (60 s by default, scaled by
    --request-timeout, so a hostile run under short deadlines never waits a fixed minute)."""
    return patience(3)


class Calls:
    """Calls on `conn`; with `names` (the server's parameter names, contract_tests/implementation/names.py)
    the arguments are renamed before they are sent. Every finding names the request."""

    names: Any = None

    def __init__(self, conn: Any, profile: Any, names: Any = None) -> None:
        self.conn, self.profile, self.names = conn, profile, names

    def read(self, response: dict[str, Any]) -> dict[str, Any]:
        """The response as the checks read it (a profile whose servers may send a failure as a
        plain result turns it into one here)."""
        return response

    def arguments(self, tool: str, arguments: Any) -> Any:
        """The arguments as sent: in the server's names."""
        return self.names.args(tool, arguments) if self.names is not None else arguments

    def describe(self, tool: str, arguments: Any) -> str:
        """The call as a finding names it."""
        return describe_call(tool, self.arguments(tool, arguments))

    def raw(self, tool: str, arguments: Any, timeout: float | None = None) -> tuple[dict[str, Any], str]:
        """The response, and the call as a finding names it."""
        args = self.arguments(tool, arguments)
        response = self.conn.call_tool(tool, args, timeout=timeout or call_wait())
        return self.read(response), describe_call(tool, args)

    def ok(self, tool: str, arguments: Any, *, req: str | None = None) -> Any:
        """Assert a successful result (else `req` fails); return its JSON, as `accept` reads it."""
        req = own(req)
        response, request = self.raw(tool, arguments)
        if not called_ok(response):
            raise RequirementFailure([Finding(req, f"expected a result, got {short(response, 300)}", None, request)])
        return self.accept(tool, tool_output(response, req=req), request, req)

    def accept(self, tool: str, body: Any, request: str, req: str) -> Any:
        """What a successful result must be beyond JSON (a profile's shape); return it."""
        return body

    def error(self, tool: str, arguments: Any, what: str, *, req: str | None = None) -> Any:
        """Assert a failure carrying the profile's structured error on an accepted channel
        (else `req` fails); return the error document."""
        req = own(req)
        response, request = self.raw(tool, arguments)
        return structured_error(response, self.profile, what, req=req, request=request)
