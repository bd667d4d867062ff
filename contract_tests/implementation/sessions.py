"""Starting the implementation under test: the profile's command over the suite's transport,
with a private HOME per server; further sessions on a running HTTP server; and the profile's
other commands by role (serve, public, hold, ...), run to their end or kept running. A
fixture kind's index or load command runs through implementation/commands.py instead."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from contract_tests.implementation.subject import Subject
from contract_tests.transport.http import HttpServer, free_port
from contract_tests.transport.limits import HEALTH, patience
from contract_tests.transport.privileges import unprivileged_prefix
from contract_tests.transport.process import Bounded, Finished, private_environment, render_command, run_bounded
from contract_tests.transport.stdio import Connection, ServerStopped, StdioServer
from contract_tests.transport.transcript import Transcript, spare_startup_paths


def session_headers(fixture: Any, token: str | None = None) -> dict[str, str]:
    """HTTP headers a session on `fixture` needs (a bearer token for hosted fixtures)."""
    make = getattr(fixture, "session_headers", None)
    return make(token) if make else {}


def watching(fixture: Any) -> Transcript:
    """A transcript that looks for the fixture's canaries (found in what a flood drops too)."""
    transcript = Transcript()
    transcript.watch(dict(getattr(fixture, "canaries", None) or {}).values())
    return transcript


def connect(suite: Subject, fixture: Any, home: Path, *, extra: dict[str, str] | None = None,
            prefix: list[str] | None = None) -> Connection:
    """Start the target for `fixture` over the suite's transport and return the connection.

    `extra` fills placeholders of the command; `prefix` is put before the server's argv (e.g.
    to drop privileges). With --server-url nothing is started: a new session on the running
    server is returned.
    """
    headers = session_headers(fixture)
    transcript = watching(fixture)
    if suite.server_url:
        return HttpServer(suite.server_url, headers=headers, transcript=transcript)
    port = str(free_port()) if suite.transport == "http" else ""
    values = {**fixture.placeholders(), "port": port, "phase": suite.phase or "", **(extra or {})}
    argv = list(prefix or []) + render_command(suite.command, values)
    env = private_environment(home) | suite.profile.environment(values)
    if suite.transport == "http":
        return HttpServer(f"http://127.0.0.1:{port}{suite.server_path}", argv, env=env, cwd=home, headers=headers,
                          transcript=transcript)
    return StdioServer(argv, env=env, cwd=home, transcript=transcript)


# Why a test that needs its own server does not run against --server-url (one reason, said once).
OWN_SERVER = ("needs a server the suite starts itself (--server-cmd): --server-url attaches to a running one, "
              "whose settings, fixture, processes and logs the suite does not control")


class ServerFactory:
    """Servers on the profile's fixture: the one under test and fresh ones like it (a new process
    from --server-cmd, or a new session on the server at --server-url), and further sessions on a
    running HTTP server. Remembers every server it gave for leak scans and cleanup."""

    def __init__(self, suite: Subject, base: Path) -> None:
        self.suite = suite
        self.base = base
        self.started: list[StdioServer] = []
        self.spawned: list[Bounded] = []
        self._homes = 0
        self._handshakes: dict[int, Connection] = {}  # id(fixture) -> the server handshakes go to

    def fresh_home(self) -> Path:
        self._homes += 1
        home = self.base / f"server-home-{self._homes}"
        home.mkdir(parents=True)
        private_environment(home)  # creates HOME, XDG and TMPDIR before any snapshot
        return home

    def start(self, fixture: Any) -> Connection:
        """A fresh server on `fixture` (the profile's, or under --server-cmd one like it): a new
        process, or under --server-url a new session on the running server."""
        return self.launch(fixture)

    def handshake(self, fixture: Any) -> Connection:
        """A connection on `fixture` that has not shaken hands yet. A handshake belongs to a
        process over stdio, so there it is a new process; over HTTP it belongs to a session, so
        it is a new session on a server kept for handshakes (started on first use, and again if
        it has gone), not the worker's server under test."""
        if self.suite.transport != "http" or self.suite.server_url:
            return self.start(fixture)
        kept = self._handshakes.get(id(fixture))
        if kept is None or not kept.alive():
            kept = self._handshakes[id(fixture)] = self.start(fixture)
        return self.session(kept, fixture)

    def launch(self, fixture: Any, *, home: Path | None = None, extra: dict[str, str] | None = None,
               unprivileged: bool = False) -> Connection:
        """`start` with settings of the test's own (what OwnServers.start offers)."""
        stopped = HEALTH.check()
        if stopped:
            raise ServerStopped(stopped)  # no new server once the run has stopped talking to them
        prefix = None
        if unprivileged:
            prefix, why = unprivileged_prefix()
            if prefix is None:
                pytest.skip(why)
        home = home or self.fresh_home()
        server = connect(self.suite, fixture, home, extra=extra, prefix=prefix)
        self.started.append(server)
        self.spare_startup(server, fixture, self.suite.transport)
        return server

    def session(self, server: Connection, fixture: Any, token: str | None = None, *,
                headers: dict[str, str] | None = None) -> HttpServer:
        """Another session on the same running HTTP server, with its own (or the default) token,
        or with these headers."""
        assert isinstance(server, HttpServer), "sessions are an HTTP notion"
        attached = HttpServer(server.url, headers=headers if headers is not None else session_headers(fixture, token),
                              transcript=watching(fixture))
        self.started.append(attached)
        return attached

    def spare_startup(self, server: Connection, fixture: Any, transport: str) -> None:
        spared = self.suite.profile.data.get("startup_output", {}).get("may_name", {}).get(transport)
        if spared and server.proc is not None:
            spare_startup_paths(server, [fixture.placeholders()[name] for name in spared])

    def close_all(self) -> None:
        for server in self.started:
            if server.alive():
                server.close(timeout=3)
        for proc in self.spawned:
            if proc.poll() is None:
                proc.kill(grace=0)


class OwnServers:
    """Processes the suite starts itself, with settings of its own: a server on another fixture,
    home or configuration, unprivileged or with a variable unset, and the implementation's other
    commands by role (serve, public, hold, ...). The `own_servers` fixture: a test that asks for
    it, itself or through a fixture, is deselected under --server-url (OWN_SERVER)."""

    def __init__(self, factory: ServerFactory) -> None:
        self.factory = factory
        self.suite = factory.suite

    def fresh_home(self) -> Path:
        return self.factory.fresh_home()

    def session(self, server: HttpServer, *, headers: dict[str, str]) -> HttpServer:
        """Another session on an HTTP server this test started, with these headers."""
        return self.factory.session(server, None, headers=headers)

    def start(self, fixture: Any, *, home: Path | None = None, extra: dict[str, str] | None = None,
              unprivileged: bool = False) -> Connection:
        """A server process of the profile's command on `fixture`, with these settings."""
        return self.factory.launch(fixture, home=home, extra=extra, unprivileged=unprivileged)

    # -- the implementation's commands by role ------------------------------------------------
    def command(self, role: str) -> str | None:
        """A role's command template: `server` is the one under test (--server-cmd); the others
        come from --rc-command ROLE=CMD or the declaration's `commands`."""
        return self.suite.command if role == "server" else self.suite.commands.get(role)

    def _launch(self, fixture: Any, role: str, values: Mapping[str, str] | None, env: Mapping[str, str] | None,
                env_drop: tuple[str, ...], append: tuple[str, ...],
                prefix: list[str] | None) -> tuple[list[str], dict[str, str], Path]:
        """argv, environment and private HOME (also the working directory) for a role's command;
        the test is skipped when the command was not given."""
        command = self.command(role)
        if command is None:
            pytest.skip(f"no {role} command was given (--rc-command {role}=CMD or the declaration's commands)")
        stopped = HEALTH.check()
        if stopped:
            raise ServerStopped(stopped)  # nothing new starts once the run has stopped talking to servers
        home = self.factory.fresh_home()
        filled = {**fixture.placeholders(), **(values or {})}
        argv = list(prefix or []) + render_command(command, filled) + list(append)
        own_env = getattr(fixture, "environment", None)  # a fixture kind that cleans the caller's settings
        environment = (own_env(home, dict(env or {})) if own_env is not None
                       else private_environment(home) | self.suite.profile.environment(filled) | dict(env or {}))
        for name in env_drop:
            environment.pop(name, None)
        return argv, environment, home

    def run(self, fixture: Any, role: str, *, values: Mapping[str, str] | None = None,
            env: Mapping[str, str] | None = None, env_drop: tuple[str, ...] = (), append: tuple[str, ...] = (),
            prefix: list[str] | None = None, input: str | None = None, timeout: float | None = None) -> Finished:
        """Run a role's command and wait up to `timeout` seconds (default: the request timeout) for
        it to end (killed after, with what it started: `timed_out`, for one that kept running)."""
        argv, environment, home = self._launch(fixture, role, values, env, env_drop, append, prefix)
        return run_bounded(argv, env=environment, cwd=home, timeout=patience() if timeout is None else timeout,
                           input=input)

    def spawn(self, fixture: Any, role: str, *, values: Mapping[str, str] | None = None,
              env: Mapping[str, str] | None = None, merge_stderr: bool = False) -> Bounded:
        """A role's command left running (a held writer, a server watched as it starts); the
        caller stops it, and close_all kills what is left."""
        argv, environment, home = self._launch(fixture, role, values, env, (), (), None)
        proc = Bounded(argv, env=environment, cwd=home, merge_stderr=merge_stderr)
        self.factory.spawned.append(proc)
        return proc

    def start_http(self, fixture: Any, role: str, *, values: Mapping[str, str] | None = None,
                   env: Mapping[str, str] | None = None, append: tuple[str, ...] = (), path: str = "/mcp",
                   headers: dict[str, str] | None = None) -> HttpServer:
        """An MCP server over HTTP from a role's command, on a free port ({port}); its output joins
        the leak scans, its startup lines sparing what the profile lets an HTTP server name."""
        port = str(free_port())
        argv, environment, home = self._launch(fixture, role, {"port": port, **(values or {})}, env, (), append,
                                               None)
        # Several servers may start side by side on a loaded machine: a slow start is not a finding.
        server = HttpServer(f"http://127.0.0.1:{port}{path}", argv, env=environment, cwd=home, headers=headers,
                            startup_timeout=60)
        self.factory.started.append(server)
        self.factory.spare_startup(server, fixture, "http")
        return server

    def start_stdio(self, fixture: Any, role: str = "server", *, values: Mapping[str, str] | None = None,
                    env: Mapping[str, str] | None = None, append: tuple[str, ...] = ()) -> StdioServer:
        """An MCP server over stdio from a role's command (the server under test by default),
        whatever the run's transport."""
        argv, environment, home = self._launch(fixture, role, values, env, (), append, None)
        server = StdioServer(argv, env=environment, cwd=home)
        self.factory.started.append(server)
        return server
