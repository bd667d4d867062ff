"""Starting servers under test: the profile's command over the suite's transport, with a
private HOME per server, and further sessions on a running HTTP server."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..harness.http import HttpServer, free_port
from ..harness.privileges import unprivileged_prefix
from ..harness.process import private_environment, render_command
from ..harness.limits import HEALTH
from ..harness.stdio import Connection, ServerStopped, StdioServer
from ..harness.transcript import Transcript, spare_startup_paths

if TYPE_CHECKING:
    from .state import SuiteState


def session_headers(fixture: Any, token: str | None = None) -> dict[str, str]:
    """HTTP headers a session on `fixture` needs (a bearer token for hosted fixtures)."""
    make = getattr(fixture, "session_headers", None)
    return make(token) if make else {}


def connect(suite: SuiteState, fixture: Any, home: Path, *, command: str | None = None,
            extra: dict[str, str] | None = None, token: str | None = None,
            prefix: list[str] | None = None, env_drop: tuple[str, ...] = ()) -> Connection:
    """Start the target for `fixture` over the suite's transport and return the connection.

    `prefix` is put before the server's argv (e.g. to drop privileges); `env_drop` names
    environment variables to leave unset. With --server-url nothing is started: a new
    session on the running server is returned.
    """
    headers = session_headers(fixture, token)
    transcript = Transcript()
    transcript.watch(dict(getattr(fixture, "canaries", None) or {}).values())  # found in what a flood drops
    if suite.server_url:
        return HttpServer(suite.server_url, headers=headers, transcript=transcript)
    port = str(free_port()) if suite.transport == "http" else ""
    values = {**fixture.placeholders(), "port": port, "phase": suite.phase or "", **(extra or {})}
    argv = list(prefix or []) + render_command(command or suite.command, values)
    env = private_environment(home) | suite.profile.environment(values)
    for name in env_drop:
        env.pop(name, None)
    if suite.transport == "http":
        return HttpServer(f"http://127.0.0.1:{port}{suite.server_path}", argv, env=env, cwd=home, headers=headers,
                          transcript=transcript)
    return StdioServer(argv, env=env, cwd=home, transcript=transcript)


class ServerFactory:
    """Starts servers for the profile's command; remembers them for leak scans and cleanup."""

    def __init__(self, suite: SuiteState, base: Path) -> None:
        self.suite = suite
        self.base = base
        self.started: list[StdioServer] = []
        self._homes = 0

    def fresh_home(self) -> Path:
        self._homes += 1
        home = self.base / f"server-home-{self._homes}"
        home.mkdir(parents=True)
        private_environment(home)  # creates HOME, XDG and TMPDIR before any snapshot
        return home

    def start(self, fixture: Any, *, home: Path | None = None, command: str | None = None,
              extra: dict[str, str] | None = None, token: str | None = None, unprivileged: bool = False,
              env_drop: tuple[str, ...] = ()) -> Connection:
        if self.suite.server_url and (command or extra or unprivileged or env_drop):
            pytest.skip("needs a server the suite starts with its own settings (--server-cmd), "
                        "not the running one at --server-url")
        stopped = HEALTH.check()
        if stopped:
            raise ServerStopped(stopped)  # no new server once the run has stopped talking to them
        prefix = None
        if unprivileged:
            prefix, why = unprivileged_prefix()
            if prefix is None:
                pytest.skip(why)
        home = home or self.fresh_home()
        server = connect(self.suite, fixture, home, command=command, extra=extra, token=token, prefix=prefix,
                         env_drop=env_drop)
        self.started.append(server)
        spared = self.suite.profile.data.get("startup_output", {}).get("may_name", {}).get(self.suite.transport)
        if spared and server.proc is not None:
            spare_startup_paths(server, [fixture.placeholders()[name] for name in spared])
        return server

    def session(self, server: Connection, fixture: Any, token: str | None = None) -> HttpServer:
        """Another session on the same running HTTP server, with its own (or the default) token."""
        assert isinstance(server, HttpServer), "sessions are an HTTP notion"
        attached = HttpServer(server.url, headers=session_headers(fixture, token))
        self.started.append(attached)
        return attached

    @property
    def can_restart(self) -> bool:
        return not self.suite.server_url

    def close_all(self) -> None:
        for server in self.started:
            if server.alive():
                server.close(timeout=3)


