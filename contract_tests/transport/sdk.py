"""Drive a Connection (stdio or HTTP) with the official SDK's ClientSession from synchronous tests.

The SDK is async; a blocking portal runs its event loop in a thread, and the connection's
reader thread hands every message not addressed to a raw probe to the SDK session.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from contract_tests.transport.limits import HEALTH, LIMITS
from contract_tests.transport.stdio import (
    BadAnswer,
    Connection,
    NoResponse,
    ServerStopped,
    describe_request,
    protocol_version,
    shortened,
)


def dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class SdkClient:
    """A ClientSession bound to one connection (stdio or HTTP); every method returns wire-shaped dicts."""

    def __init__(self, server: Connection, timeout: float | None = None) -> None:
        self.server = server
        self.timeout = timeout
        self._portal_cm = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._session_cm = self.portal.wrap_async_context_manager(self._open())
        try:
            self.session: ClientSession = self._session_cm.__enter__()
            self.init_result = dump(self._run(self.session.initialize, method="initialize"))
        except BaseException:
            self.close()
            raise

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[ClientSession]:
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](1000)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](1000)
        portal = self.portal

        def deliver(message: Any) -> None:
            try:
                item: SessionMessage | Exception = SessionMessage(
                    types.jsonrpc_message_adapter.validate_python(message, by_name=False))
            except ValueError as exc:
                item = exc
            portal.call(read_writer.send, item)

        async def pump_out() -> None:
            async for session_message in write_reader:
                message = session_message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                if message.get("method") == "initialize":  # the SDK offers its latest; offer the run's
                    message["params"]["protocolVersion"] = protocol_version()
                self.server.send(message)

        self.server.attach_sdk(deliver)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump_out)
                async with ClientSession(read_stream, write_stream) as session:
                    yield session
                tg.cancel_scope.cancel()
        finally:
            self.server.attach_sdk(None)

    def _run(self, fn, *args: Any, method: str = "", **kwargs: Any) -> Any:
        """One SDK request under the run's limits: not sent once the run or this connection has
        stopped (ServerStopped), bounded by the request deadline, and counted by the breaker."""
        stopped = HEALTH.check()
        if stopped:
            raise ServerStopped(stopped)
        self.server.refuse_if_stalled()
        asked = self.timeout or LIMITS.request_timeout
        describe = describe_request(method, {"name": args[0], "arguments": args[1] if len(args) > 1 else {}}
                                    if method == "tools/call" and args else None)
        timeout = HEALTH.deadline(method, asked)
        started = time.monotonic()

        async def bounded() -> Any:
            with anyio.fail_after(timeout):
                return await fn(*args, **kwargs)
        try:
            result = self.portal.call(bounded)
        except TimeoutError as exc:
            HEALTH.not_answered(method, timeout, shortened(describe))
            self.server.stall(method, describe, timeout)
            answered, self.server.answered_requests = self.server.answered_requests, 0
            raise NoResponse(f"no response to {method or 'a request'} within {timeout:g} s",
                             answered_before=answered, full_wait=timeout >= asked, request=describe) from exc
        except MCPError as exc:
            data = exc.error.data
            if isinstance(data, dict) and BadAnswer.MARK in data:  # made by the HTTP harness
                HEALTH.answered(method, time.monotonic() - started)
                raise BadAnswer(f"the answer to {method} was {data[BadAnswer.MARK]}") from None
            raise
        HEALTH.answered(method, time.monotonic() - started)
        self.server.answered_requests += 1
        return result

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.init_result.get("capabilities", {})

    def list_tools(self) -> list[dict[str, Any]]:
        return dump(self._run(self.session.list_tools, method="tools/list"))["tools"]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The CallToolResult as a dict; a JSON-RPC error comes back as {"jsonrpc", "error"}
        (the raw connection's shape), not as an exception, so checks read either channel."""
        try:
            return self._call_tool(name, arguments)
        except MCPError as exc:
            error = exc.error
            return {"jsonrpc": "2.0", "error": {"code": error.code, "message": error.message, "data": error.data}}

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return dump(self._run(self.session.call_tool, name, arguments, method="tools/call"))

    def list_resources(self) -> list[dict[str, Any]]:
        return dump(self._run(self.session.list_resources, method="resources/list")).get("resources", [])

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return dump(self._run(self.session.list_resource_templates,
                              method="resources/templates/list")).get("resourceTemplates", [])

    def list_prompts(self) -> list[dict[str, Any]]:
        return dump(self._run(self.session.list_prompts, method="prompts/list")).get("prompts", [])

    def ping(self) -> dict[str, Any]:
        return dump(self._run(self.session.send_ping, method="ping"))

    def close(self) -> None:
        try:
            self._session_cm.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - closing a broken session must not mask the test
            pass
        finally:
            self._portal_cm.__exit__(None, None, None)
