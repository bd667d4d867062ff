"""The bounds that keep a run alive whatever the server does: a deadline on every request, a
cap on one message and on what is kept of a flood, and the breaker that ends the run when the
server stops answering; a deadline on the implementation's own commands (index, load), and a
command that overran it is not run again in the same process.

One `LIMITS` per process (each xdist worker sets it from the same options), one `HEALTH` per
process: after `unanswered_limit` requests of one method in a row get no answer, or
`unanswered_seconds` were spent waiting on them (or the run budget is spent),
every later request fails at once with ServerStopped, so the remaining checks are blocked in
seconds instead of each waiting out its own deadline. A connection that left one request
unanswered sends nothing more; once a later request was refused for it (`refused`), checks were
lost to the silence and the run has stopped talking to that server (`reasons`, exit 9) though
the breaker did not trip.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass
class Limits:
    request_timeout: float = 20.0        # seconds a request waits unless its caller asks for more
    max_message_bytes: int = 32 * MIB    # one message (a stdio line, an HTTP body, an SSE event)
    evidence_bytes: int = 64 * 1024      # what is kept of a message over the limit
    max_lines: int = 20_000              # lines kept per channel of one connection; later ones are counted
    max_kept_bytes: int = 16 * MIB       # characters kept per channel of one connection (responses aside)
    max_kept_log_bytes: int = 4 * MIB    # characters of logs (stderr) kept per connection
    max_kept_total: int = 64 * MIB       # characters kept over every connection of the process (responses aside)
    log_line_chars: int = 64 * 1024      # one log line (stderr) kept; the rest is counted and searched
    max_unsolicited: int = 1_000         # notifications and requests the server sent, kept per connection
    flood_messages: int = 500_000        # unrequested messages over the run (every connection) that end it
    flood_bytes: int = 64 * MIB          # or their bytes: a server that floods without end ends the run
    unanswered_limit: int = 3            # requests in a row without an answer that end the run
    unanswered_seconds: float = 45.0     # or this long waited in a row without an answer (2.25 timeouts)
    slow_limit: int = 4                  # answers in a row slower than slow_seconds
    slow_seconds: float = 5.0            # (a quarter of request_timeout)
    run_budget: float | None = None      # seconds the whole run may take (None: no budget)
    command_timeout: float = 60.0        # one of the implementation's own commands (index, load) to finish


LIMITS = Limits()


# The methods whose silence ends the run. Each is counted on its own, and only its own answer
# resets it: a server that answers tools/list but never tools/call still stops the run. A method a
# server may leave unanswered without being broken (an unknown one, ping) never ends it.
COUNTED = ("initialize", "tools/list", "tools/call")


class Health:
    """Whether the server still answers: per counted method, the requests in a row (across
    connections) that got no answer and how long they waited."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.silent: dict[str, tuple[int, float]] = {}  # method -> (unanswered in a row, seconds waited)
        self.slow = 0                                    # slow answers in a row (counted methods)
        self.stalls = 0                                  # connections that stopped answering
        self.lost: str | None = None                     # the first stall a later request was refused for
        self.unrequested = [0, 0]                        # unrequested messages, and their bytes, over the run
        self.stopped: str | None = None
        self.started = time.monotonic()
        # A command role (index, load) that did not finish in time -> the seconds it was given. Not
        # cleared by reset(): a command that hung in the preflight is not run again either.
        self.hung_commands: dict[str, float] = {}

    def reset(self) -> None:
        with self._lock:
            self.silent, self.slow, self.stopped, self.started = {}, 0, None, time.monotonic()
            self.stalls, self.lost = 0, None
            self.unrequested = [0, 0]

    def flooded(self, nbytes: int) -> None:
        """One message the suite did not ask for (a notification, a stray line). Past
        LIMITS.flood_messages of them, or LIMITS.flood_bytes, over the run, the run stops: every
        one is read and counted, so a server that floods before every answer would otherwise
        take the run for ever (the first of them are kept as evidence, the rest counted)."""
        count = self.unrequested
        count[0] += 1  # under the GIL; an approximate count is enough for a budget this large
        count[1] += nbytes
        if self.stopped is None and (count[0] > LIMITS.flood_messages or count[1] > LIMITS.flood_bytes):
            with self._lock:
                if self.stopped is None:
                    self._stop(f"the server floods: {count[0]:,} notifications or other unrequested messages "
                               f"({count[1] / MIB:,.0f} MiB) over the run, past the budget of "
                               f"{LIMITS.flood_messages:,} messages or {LIMITS.flood_bytes // MIB:,} MiB")

    def answered(self, method: str, seconds: float = 0.0) -> None:
        """An answer. As many slow ones in a row as LIMITS.slow_limit (each over a quarter of the
        request timeout) end the run too: a server that answers every call after 10 s would
        take hours over a whole run, and says what it does after five."""
        with self._lock:
            self.silent.pop(method, None)
            if method not in COUNTED:
                return
            threshold = LIMITS.slow_seconds
            slow = seconds >= threshold
            self.slow = self.slow + 1 if slow else 0
            if self.stopped is None and self.slow >= LIMITS.slow_limit:
                self._stop(f"the server answers too slowly to finish the run: {self.slow} requests in a row "
                           f"each took {threshold:g} s or more (the last, {method}, "
                           f"{seconds:.1f} s)")

    def not_answered(self, method: str, waited: float, request: str | None = None) -> None:
        """A request of `method` (`request`: the call, described) got no answer in `waited` s."""
        if method not in COUNTED:
            return
        with self._lock:
            count, total = self.silent.get(method, (0, 0.0))
            count, total = count + 1, total + waited
            self.silent[method] = (count, total)
            if self.stopped is None and (count >= LIMITS.unanswered_limit or total >= LIMITS.unanswered_seconds):
                self._stop(f"the server stopped answering: {count} {method} request{'s' if count > 1 else ''} "
                           f"in a row got no answer ({total:g} s waited{f'; the last: {request}' if request else ''})")

    def stalled(self, what: str) -> None:
        """A connection stopped answering (its later requests are not sent); as many stalled
        connections as LIMITS.unanswered_limit end the run, whatever other servers answer."""
        with self._lock:
            self.stalls += 1
            if self.stopped is None and self.stalls >= LIMITS.unanswered_limit:
                self._stop(f"the server stops answering: {self.stalls} of the servers the run started stopped "
                           f"answering mid-run (the last: {what})")

    def refused(self, stall: str) -> None:
        """A request was not sent because its connection had stopped answering (`stall`, naming
        the call left unanswered): the checks that needed it are blocked, so the run stopped
        talking to that server (exit 9), though other connections go on. A stall no later request
        met costs nothing (a check that expects a server may ignore a request judges it itself);
        the first stall that cost one is the reason kept."""
        with self._lock:
            if self.lost is None:
                self.lost = (f"the server stopped answering: {stall}, and the later requests on that "
                             "connection were not sent")

    def reasons(self) -> list[str]:
        """Why this process stopped talking to the server, if it did: the breaker's reason (or
        another worker's, or the budget's), then the first stall that cost a request."""
        return [why for why in (self.stopped, self.lost) if why]

    def oversized(self, method: str, size: int) -> None:
        """An answer over the size limit is no usable answer either: as many in a row end the run."""
        if method not in COUNTED:
            return
        with self._lock:
            count, total = self.silent.get(method, (0, 0.0))
            self.silent[method] = (count + 1, total)
            if self.stopped is None and count + 1 >= LIMITS.unanswered_limit:
                self._stop(f"the server stopped giving usable answers: {count + 1} {method} requests in a row "
                           f"were answered with a message over the {LIMITS.max_message_bytes:,}-byte limit "
                           f"(the last {size:,} bytes)")

    def deadline(self, method: str, timeout: float) -> float:
        """A request's wait: after requests of its method got no answer, no more than what is left
        of LIMITS.unanswered_seconds (a server that hangs ends the run in about that long)."""
        with self._lock:
            count, total = self.silent.get(method, (0, 0.0))
            if count:
                return max(1.0, min(timeout, LIMITS.unanswered_seconds - total))
            return timeout

    def command_hung(self, role: str, timeout: float) -> None:
        with self._lock:
            self.hung_commands.setdefault(role, timeout)

    def stop(self, why: str) -> None:
        with self._lock:
            if self.stopped is None:
                self._stop(why)

    def _stop(self, why: str) -> None:
        """(Lock held.) The run stops here, and in every other worker of the run: the reason is
        left in the run's shared file, which `check` reads."""
        self.stopped = why
        shared = os.environ.get(STOP_FILE)
        if shared:
            try:
                with open(shared, "x", encoding="utf-8") as handle:  # the first reason stands
                    handle.write(why)
            except OSError:
                pass

    def check(self) -> str | None:
        """Why the run has stopped, if it has: here, in another worker, or by the budget."""
        budget = LIMITS.run_budget
        if self.stopped is None and budget is not None and time.monotonic() - self.started > budget:
            self.stop(f"the run budget of {budget:g} s is spent")
        shared = os.environ.get(STOP_FILE)
        if self.stopped is None and shared and os.path.exists(shared):
            try:
                with open(shared, encoding="utf-8") as handle:
                    why = handle.read(2000)
            except OSError:
                why = ""
            with self._lock:
                if self.stopped is None:
                    self.stopped = why or "another worker of the run stopped talking to the server"
        return self.stopped


HEALTH = Health()


def patience(times: float = 1.0) -> float:
    """A wait the documents do not set, as a multiple of the request timeout (so a run given short
    deadlines waits briefly everywhere, and the default run as long as it always did)."""
    return times * LIMITS.request_timeout

# The environment variable naming the file in which a run's workers share why it stopped (set
# by the controller before its workers start; a run without workers has it too).
STOP_FILE = "RC_STOP_FILE"


def configure(request_timeout: float | None = None, max_message_bytes: int | None = None,
              run_budget: float | None = None, command_timeout: float | None = None) -> None:
    if request_timeout is not None:
        # The breaker scales with the deadline (the defaults: 20 s, 45 s, 5 s), so a run given short
        # deadlines ends in seconds on a server that stops answering or answers ever so slowly.
        LIMITS.request_timeout = float(request_timeout)
        LIMITS.unanswered_seconds = 2.25 * LIMITS.request_timeout
        LIMITS.slow_seconds = LIMITS.request_timeout / 4
    if max_message_bytes is not None:
        LIMITS.max_message_bytes = int(max_message_bytes)
    if command_timeout is not None:
        LIMITS.command_timeout = float(command_timeout)
    LIMITS.run_budget = float(run_budget) if run_budget else None
    HEALTH.reset()
    HEALTH.hung_commands.clear()
