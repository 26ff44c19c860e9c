"""How wide text output may be: the terminal's width on a terminal, else COLUMNS, else 100 columns (a log
file or a pager). Light (no rich), so `iotuner --help` stays fast."""

from __future__ import annotations

import os
import shutil
from typing import TextIO

PIPED_COLUMNS = 100  # text that goes to a file or a pipe, unless COLUMNS says otherwise
MIN_COLUMNS = 40


def piped_width() -> int:
    columns = os.environ.get("COLUMNS", "").strip()
    return max(MIN_COLUMNS, int(columns)) if columns.isdigit() else PIPED_COLUMNS


def width(stream: TextIO) -> int:
    """Columns to fit on stream."""
    try:
        if stream.isatty():
            return max(MIN_COLUMNS, shutil.get_terminal_size((PIPED_COLUMNS, 24)).columns)
    except (AttributeError, ValueError):  # a closed or unusual stream
        pass
    return piped_width()
