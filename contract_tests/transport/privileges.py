"""Run a server without the power to bypass file permissions, so that "unreadable" means
unreadable even when the suite runs as root (as CI does).

As root, the server is started through util-linux `setpriv` with CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH removed from its bounding set: it keeps uid 0 (so HOME, the fixture and
the interpreter stay reachable) but mode bits apply to it. As any other user nothing is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache

DROP = "--bounding-set=-dac_override,-dac_read_search"


@cache
def unprivileged_prefix() -> tuple[list[str] | None, str]:
    """(argv prefix, '') when permissions can be made to bite; (None, why) when they cannot."""
    if os.geteuid() != 0:
        return [], ""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None, "the suite runs as root and util-linux setpriv is not installed, so file permissions " \
                     "cannot be made to apply to the server"
    probe = [setpriv, DROP, "--", sys.executable, "-c",
             "import os,sys,tempfile\nfd,p=tempfile.mkstemp()\nos.chmod(p,0)\n"
             "try:\n open(p).close(); sys.exit(3)\nexcept PermissionError: sys.exit(0)\nfinally: os.unlink(p)"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20)
    except OSError as exc:
        return None, f"setpriv could not run ({exc})"
    if done.returncode != 0:
        return None, f"setpriv could not drop CAP_DAC_OVERRIDE here (exit {done.returncode}: " \
                     f"{done.stderr.decode(errors='replace').strip()[:200]})"
    return [setpriv, DROP, "--"], ""
