"""Reading the files a command is given: only what it understands.

A binary or foreign file (a Darshan log handed to `show`, a PNG, an empty
file) is refused with one line that names it and says what it looks like;
the CLI turns InputError into exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

EXIT_INPUT = 2

# leading bytes of formats users hand to the wrong command
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"CDF\x01", "a netCDF file"), (b"CDF\x02", "a netCDF file"),
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


def read_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The file's bytes; InputError when it cannot be read, is empty or is binary."""
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError(f"{path} is a directory, not {what}")
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if not data.strip():
        raise InputError(f"{path} is empty, not {what}")
    kind = sniff(data[:4096])
    if kind:
        hint = " (for a Darshan log: iotuner advise)" if kind == "a Darshan log" else ""
        raise InputError(f"{path} is {kind}, not {what}{hint}")
    return data


def read_text(path: str | os.PathLike, what: str, encoding: str = "utf-8") -> str:
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding)
    except (UnicodeDecodeError, LookupError) as e:
        raise InputError(f"{path} is not {encoding} text ({e.reason if hasattr(e, 'reason') else e}), "
                         f"not {what}") from None


def read_json(path: str | os.PathLike, what: str) -> Any:
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path} is not JSON ({e}), not {what}") from None
    except RecursionError:
        raise InputError(f"{path} nests too deeply to be {what}") from None
