"""Darshan logs: checked, then read by PyDarshan in a child process.

libdarshan-util (under PyDarshan) prints its complaints about a damaged log
on stderr, may go on with part of the records, and may crash. So the header
is checked here first (a Darshan version string, the regions it announces
present in the file), the log is read by `darshan_reader` in a child, and any
complaint, exception or crash becomes one InputError naming the problem.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

from .. import optional
from ..inputs import is_darshan_header
from .errors import EXIT_USAGE, InputError

OLDEST = (3, 0)  # libdarshan-util 3.x reads format 3.00 and later; older logs need darshan-convert
_HEADER_REGIONS = 17  # the name map, then module regions; later map entries are not used by any module yet


def looks_like_darshan(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return is_darshan_header(head)


def check_header(path: Path) -> str:
    """The log's format version; InputError when it is not a Darshan log, too old, or truncated."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(24 + 16 * _HEADER_REGIONS)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None
    if size == 0:
        raise InputError(f"{path} is empty: not a Darshan log")
    m = re.fullmatch(rb"(\d+)\.(\d+)\x00*", head[:8])
    if not m:
        raise InputError(f"{path} is not a Darshan log (it does not start with a Darshan format version)")
    version = (int(m.group(1)), int(m.group(2)))
    text = f"{version[0]}.{m.group(2).decode()}"
    if version < OLDEST:
        raise InputError(
            f"{path} is a Darshan log of format {text}, which is not supported: PyDarshan reads "
            f"format 3.00 and later (convert it with darshan-convert from Darshan 3)"
        )
    if len(head) < 24 + 16 * _HEADER_REGIONS:
        raise InputError(f"{path} is truncated: {size} bytes, shorter than a Darshan header")
    # the regions the header announces follow one another from the header's end
    regions = sorted(
        (off, n)
        for off, n in (struct.unpack_from("<QQ", head, 24 + 16 * i) for i in range(_HEADER_REGIONS))
        if n and off < 1 << 40
    )
    end = None
    for off, n in regions:
        if end is not None and off != end:
            break
        end = off + n
    if end is not None and size < end:
        raise InputError(f"{path} is truncated: {size} bytes, but its header announces {end}")
    return text


def _complaint(stderr: str) -> str | None:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("Error:")]
    if not lines:
        return None
    module = next((ln for ln in lines if "failed to read" in ln), lines[0])
    return module.removeprefix("Error:").strip().rstrip(".")


def read(path: str | os.PathLike, timeout: float = 900) -> dict:
    """The facts of a Darshan log (see darshan_reader), or InputError."""
    path = Path(path)
    version = check_header(path)
    try:  # only to fail early, in one line: the reader imports it again in its own process
        optional.load("darshan", "reading Darshan logs")
    except optional.Missing as e:
        raise InputError(str(e), exit_code=EXIT_USAGE) from None
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "iotuner.advise.darshan_reader", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise InputError(f"reading {path} took more than {timeout:.0f} s; gave up") from None
    problem = _complaint(proc.stderr)
    if proc.returncode < 0:
        raise InputError(
            f"{path} is corrupt: libdarshan-util crashed reading it (signal {-proc.returncode})"
            + (f" after: {problem}" if problem else "")
        )
    if problem:
        raise InputError(
            f"{path} is damaged (corrupt or truncated Darshan log, format {version}): libdarshan-util: {problem}"
        )
    if proc.returncode != 0:
        last = next(
            (ln for ln in reversed(proc.stderr.splitlines()) if ln.startswith("iotuner-darshan-reader:")),
            proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no message",
        )
        raise InputError(
            f"cannot read Darshan log {path} (format {version}): {last.removeprefix('iotuner-darshan-reader:').strip()}"
        )
    try:
        facts = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise InputError(f"cannot read Darshan log {path}: the reader gave no result") from None
    facts["log_version"] = version
    return facts
