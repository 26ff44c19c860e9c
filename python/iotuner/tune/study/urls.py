"""Storage URLs without their secrets: what every printed line, log and file shows.

A password given in the URL (postgresql://user:PASSWORD@host/db) is shown as
`***`, and the text streams of a process that holds one pass every line through
`Redacting`, so a message or traceback that quotes the raw URL hides it too.
Workers get the URL through the environment (IOTUNER_STORAGE) or a file only
its user can read, never on their command line. PostgreSQL's own ways work as
usual: a URL without a password lets libpq take it from PGPASSWORD or ~/.pgpass.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import TextIO
from urllib.parse import unquote

ENV = "IOTUNER_STORAGE"  # the storage URL, for workers started by the tuner
HIDDEN = "***"


def password(url: str) -> str | None:
    """The password in a URL's authority (user:PASSWORD@host), or None."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    authority = rest.split("/", 1)[0].split("?", 1)[0]
    userinfo, at, _ = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return None
    return userinfo.split(":", 1)[1] or None


def mask(url: str) -> str:
    """The URL with its password as ***."""
    secret = password(url)
    if not secret:
        return url
    scheme, _, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    userinfo, _, host = authority.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:{HIDDEN}@{host}{slash}{tail}"


def resume_hint(name: str, storage: str) -> str:
    """How to continue a study, with its storage shown as it may be: without the password."""
    hint = f"iotuner tune --resume --study {name} --storage {mask(storage)}"
    if password(storage):
        hint += (
            f" (with the password, which is not shown: set {ENV} to the whole URL, or leave the password "
            f"out of the URL and give it with PGPASSWORD or ~/.pgpass)"
        )
    return hint


def secrets_of(url: str) -> list[str]:
    """The password as written in the URL, and decoded (a %40 in the URL is an @ in the driver's words)."""
    secret = password(url)
    if not secret:
        return []
    return sorted({secret, unquote(secret)}, key=len, reverse=True)


class Redacting(io.TextIOBase):
    """A text stream that writes through to another with the secrets replaced by ***."""

    def __init__(self, inner: TextIO, secrets: list[str]):
        self.inner, self.secrets = inner, secrets

    def write(self, text: str) -> int:
        shown = text
        for s in self.secrets:
            shown = shown.replace(s, HIDDEN)
        self.inner.write(shown)
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self):  # type: ignore[override]  # TextIOBase's is an attribute
        return getattr(self.inner, "encoding", "utf-8")


def guard_output(url: str | None) -> None:
    """From now on, this process's stdout and stderr never show the URL's password."""
    secrets = secrets_of(url) if url else []
    if not secrets:
        return
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, Redacting):
            stream.secrets = sorted(set(stream.secrets) | set(secrets), key=len, reverse=True)
        else:
            setattr(sys, name, Redacting(stream, secrets))


def write_private(path: Path, url: str) -> Path:
    """The URL in a file only this user can read (for workers on other machines, which see the file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(url + "\n")
    return path


def read_private(path: str) -> str:
    """A URL from a file written by write_private; refuses a file others can read."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
        text = p.read_text().strip()
    except OSError as e:
        raise ValueError(f"cannot read the storage URL from {path}: {e.strerror}") from None
    if mode & 0o077 and password(text):
        raise ValueError(f"{path} holds a password and others can read it: chmod 600 {path}")
    if not text:
        raise ValueError(f"{path} is empty: it should hold the study storage URL")
    return text
