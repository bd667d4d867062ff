"""A server that answers everything but the tool calls whose arguments contain a word: the
server it wraps (a stdio MCP server, started as a child) gets every other line, and those
calls are never passed on nor answered, as a real server that hangs on one kind of path does.

    python tests/hostile/hang_on.py WORD -- CMD [ARG...]

The self-tests give it ".." and the fs example (reference/generic_files/fs.py): the server
serves the root, and stops answering at the first path that climbs out of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading


def main(argv: list[str]) -> int:
    word, cmd = argv[0], argv[argv.index("--") + 1:]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def pump() -> None:
        for line in child.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
    threading.Thread(target=pump, daemon=True).start()
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "tools/call" \
                and word in json.dumps((message.get("params") or {}).get("arguments")):
            continue
        child.stdin.write(raw)
        child.stdin.flush()
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
