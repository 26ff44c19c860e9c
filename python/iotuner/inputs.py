"""Reading the files a command is given: only what it understands.

Every input goes through read_bytes: a regular file only (a FIFO, a device or
a directory is refused at once), of bounded size, its format sniffed from its
first bytes before the rest is read. A binary or foreign file (a Darshan log
handed to `show`, a PNG, an empty file) is refused with one line that names
it and says what it looks like; the CLI turns InputError into exit status 2,
never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

EXIT_INPUT = 2

# leading bytes of formats users hand to the wrong command
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"CDF\x01", "a netCDF file"),
    (b"CDF\x02", "a netCDF file"),
    (b"%PDF", "a PDF document"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
)


class InputError(ValueError):
    """A file a command cannot read: the message names it and the reason."""

    exit_code = EXIT_INPUT


def is_darshan_header(head: bytes) -> bool:
    """A Darshan log starts with its format version ("3.41") padded with NULs to 8 bytes."""
    return re.fullmatch(rb"\d+\.\d+\x00*", head[:8]) is not None and len(head) >= 8


def sniff(head: bytes) -> str | None:
    """What a binary file is ("a Darshan log", "a PNG image", "binary data"); None for text."""
    if is_darshan_header(head):
        return "a Darshan log"
    for magic, name in SIGNATURES:
        if head.startswith(magic):
            return name
    if b"\x00" in head:
        return "binary data"
    return None


# Largest input a command reads, by default; a larger file is refused before it fills memory.
MAX_BYTES = 64 << 20


class NotAFile(InputError):
    """A FIFO, a device, a socket or a directory where a file goes: refused at once, never waited on."""


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is ("a FIFO"), or None for a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def regular_file(path: str | os.PathLike, what: str) -> Path:
    """The path of a regular file, for a reader that opens it itself (PyDarshan); InputError (NotAFile for a
    FIFO, a device or a directory) otherwise."""
    path = Path(path)
    try:
        kind = _kind(os.stat(path).st_mode)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if kind:
        raise NotAFile(f"{path} is {kind}, not {what}")
    return path


def read_bytes(path: str | os.PathLike, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes; InputError when it cannot be read, is not a regular file (NotAFile: a FIFO, a device
    or a directory, refused before anything waits on it), is larger than max_bytes, empty, or binary (its
    first bytes are looked at before the rest is read)."""
    path = Path(path)
    try:
        kind = _kind(os.stat(path).st_mode)
        if kind:
            raise NotAFile(f"{path} is {kind}, not {what}")
        # O_NONBLOCK: should a FIFO take the file's place after the check, opening it does not wait
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            kind = _kind(st.st_mode)
            if kind:
                raise NotAFile(f"{path} is {kind}, not {what}")
            if st.st_size > max_bytes:
                raise InputError(
                    f"{path} is {_size(st.st_size)}: more than iotuner reads as {what} ({_size(max_bytes)})"
                )
            head = f.read(4096)
            found = sniff(head)
            if found:
                hint = " (for a Darshan log: iotuner advise)" if found == "a Darshan log" else ""
                raise InputError(f"{path} is {found}, not {what}{hint}")
            data = head + f.read(max_bytes + 1 - len(head))  # a file that grew since fstat stops at the cap
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise InputError(f"{path} is more than iotuner reads as {what} ({_size(max_bytes)})")
    if not data.strip():
        raise InputError(f"{path} is empty, not {what}")
    return data


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n} bytes"


def read_text(path: str | os.PathLike, what: str, encoding: str = "utf-8", max_bytes: int = MAX_BYTES) -> str:
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding)
    except (UnicodeDecodeError, LookupError) as e:
        raise InputError(
            f"{path} is not {encoding} text ({e.reason if hasattr(e, 'reason') else e}), not {what}"
        ) from None


def read_json(path: str | os.PathLike, what: str, max_bytes: int = MAX_BYTES) -> Any:
    text = read_text(path, what, max_bytes=max_bytes)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path} is not JSON ({e}), not {what}") from None
    except RecursionError:
        raise InputError(f"{path} nests too deeply to be {what}") from None
