"""Where iotuner's own output files go, checked before a job runs.

A path iotuner cannot write its report to (a read-only file system, a directory, a name longer than a file
name can be, a path longer than PATH_MAX, a missing directory, a symbolic link, which the runtime never writes
through) must never cost the user the job. `why_unwritable` says why a path cannot take a file, without
touching what is there; `report_destination` picks a temporary path instead, with one warning that says
where the report goes.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

NAME_MAX = 255  # Linux's limit on one name; PATH_MAX on a whole path (with its NUL)
PATH_MAX = 4096


def shown(path: str | os.PathLike, width: int = 100) -> str:
    """A path for a message: a very long one with its middle left out."""
    text = str(path)
    return (
        text if len(text) <= width else f"{text[: width // 2]}...{text[-(width // 2 - 3) :]} ({len(text)} characters)"
    )


def _limit(directory: str, name: str, default: int) -> int:
    try:
        return os.pathconf(directory, name)
    except (OSError, ValueError):
        return default


def why_unwritable(path: str | os.PathLike) -> str | None:
    """Why no file can be written at path (one clause), or None when it can. An existing regular file is fine
    (it is replaced); nothing at path is changed: the directory is probed with a file of iotuner's own."""
    text = os.fspath(path)
    if not text:
        return "the path is empty"
    full = os.path.abspath(text)
    raw = os.fsencode(full)
    if b"\x00" in raw:
        return "the path holds a NUL byte"
    parent = os.path.dirname(full)
    if len(raw) >= _limit("/", "PC_PATH_MAX", PATH_MAX):
        return f"the path is {len(raw)} bytes long, more than a path can be ({PATH_MAX - 1})"
    for part in raw.split(b"/"):
        if len(part) > NAME_MAX:
            return f"a name in it is {len(part)} bytes long, more than a file name can be ({NAME_MAX})"
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        st = None
    except OSError as e:
        return _reason(e)
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            return "it is a symbolic link (the report is never written through one; the link is left as it is)"
        if stat.S_ISDIR(st.st_mode):
            return "it is a directory"
        if not stat.S_ISREG(st.st_mode):
            return "it is not a regular file"
    if not os.path.isdir(parent):
        return (
            f"its directory {shown(parent)} does not exist"
            if not os.path.exists(parent)
            else f"{shown(parent)} is not a directory"
        )
    try:  # what the runtime does: a file of its own in the directory, renamed over the report
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".iotuner-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"no file can be made in {shown(parent)} ({_reason(e)})"
    return None


def _reason(e: OSError) -> str:
    return {
        errno.ENOTDIR: "a part of its path is not a directory",
        errno.ELOOP: "its path loops through symbolic links",
    }.get(e.errno, e.strerror or str(e))


def report_destination(path: str | os.PathLike | None, option: str = "--report") -> tuple[Path | None, str | None]:
    """(where the job's report goes, the warning to print or None). A path the report cannot be written to
    gives a fresh temporary one instead (the warning says where; it is kept after the run); None stays None
    (the caller's own temporary report). When no temporary directory can be made either, (None, warning):
    the job runs without a report kept."""
    if path is None:
        return None, None
    why = why_unwritable(path)
    if why is None:
        return Path(path), None
    try:
        instead = Path(tempfile.mkdtemp(prefix="iotuner-report-")) / "report.json"
    except OSError as e:
        return (
            None,
            f"{option} {shown(path)}: {why}; no temporary directory for it either ({e.strerror}): "
            "the job runs without a report kept",
        )
    return instead, f"{option} {shown(path)}: {why}; the report goes to {instead} instead, and the job runs"


def forget_if_unused(fallback: Path | None) -> None:
    """Removes a temporary report directory that the job left empty (it wrote no report)."""
    if fallback is not None and fallback.name == "report.json" and fallback.parent.name.startswith("iotuner-report-"):
        try:
            fallback.parent.rmdir()
        except OSError:
            pass
