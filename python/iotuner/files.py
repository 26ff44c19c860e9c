"""Writing result files: atomically, with the mode any other tool would give them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class OutputError(OSError):
    """A result file that cannot be written (a read-only file system, a directory in its place): the message
    names it and the reason; the CLI prints it in one line (exit status 2), never a traceback. An OSError, so
    that callers that carry on without the file (a study's model, a run's scratch) still catch it."""

    exit_code = 2


def write_atomic(path: str | os.PathLike, text: str) -> Path:
    """A reader never sees half a file; the mode is open()'s (0666 less the umask), not mkstemp's 0600, so
    a group that shares results can read them. OutputError when it cannot be written."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(
            dir=path.parent if str(path.parent) else ".", prefix=f".{path.name[:200]}.", suffix=".tmp"
        )
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
