"""The retrieval-tools reference with a request it never answers:
`python launch_retrieval_tools_hangs.py MUTANT [server args]`.

A hang on an attack is a finding of the requirement the attack tests (verdicts.unanswered): the
server answered the requests before it, and JSON-RPC gives every request a response.
"""

from __future__ import annotations

import sys
import threading

try:
    from tests.mutants._dispatch import mutant, run
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run  # type: ignore[no-redef]

from reference.retrieval_tools import server, tools


@mutant("RT-PATH-001", profile="retrieval-tools", options=("--request-timeout", "4"))
def rt_hangs_on_dotdot():
    """Never answers a call whose path has a `..` segment (every other call is answered)."""
    original = tools.call_tool

    def hanging(roots, name, arguments):
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if isinstance(path, str) and ".." in path.replace("\\", "/").split("/"):
            threading.Event().wait()
        return original(roots, name, arguments)
    tools.call_tool = hanging
    server.call_tool = hanging


if __name__ == "__main__":
    sys.exit(run("launch_retrieval_tools_hangs.py", server.main))
