"""Which files a server opens, seen through Linux inotify (ctypes, no extra dependency).

Used to prove "reject before any read" and "reads one note only". Where inotify is not
available the checks that need it are skipped with that reason.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import sys
from pathlib import Path

IN_ACCESS = 0x001
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_OPEN = 0x020
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_ISDIR = 0x40000000
IN_Q_OVERFLOW = 0x4000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
WATCH_MASK = IN_OPEN | IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_TO
_EVENT = struct.Struct("iIII")


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return lib if hasattr(lib, "inotify_init1") else None
    except OSError:
        return None


_LIBC = _libc()


def available() -> bool:
    return _LIBC is not None


class OpenWatcher:
    """Watch every directory under `root` (not following symlinks) for opens and writes."""

    def __init__(self, root: Path) -> None:
        if _LIBC is None:
            raise OSError("inotify is not available on this platform")
        self.fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.dirs: dict[int, Path] = {}
        self.overflowed = False
        for dirpath, dirnames, _files in os.walk(root):
            self._watch(Path(dirpath))
        self.drain()  # the walk above opened directories itself

    def _watch(self, directory: Path) -> None:
        wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(directory), WATCH_MASK)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch failed")
        self.dirs[wd] = directory

    def drain(self) -> list[tuple[Path, int]]:
        """All events queued so far, as (path, mask); a directory itself has an empty name."""
        events: list[tuple[Path, int]] = []
        while select.select([self.fd], [], [], 0)[0]:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size: offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    self.overflowed = True
                    continue
                base = self.dirs.get(wd)
                if base is not None:
                    events.append((base / os.fsdecode(name) if name else base, mask))
        return events

    def opened(self) -> set[Path]:
        return {path for path, mask in self.drain() if mask & IN_OPEN}

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> "OpenWatcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
