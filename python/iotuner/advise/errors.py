"""The one error `iotuner advise` reports for input it cannot use."""

from __future__ import annotations

from .. import inputs

# Exit codes of `iotuner advise` (documented in docs/advise.md).
EXIT_OK = 0  # no finding of level high
EXIT_HIGH = 1  # at least one finding of level high
EXIT_UNREADABLE = 2  # the input cannot be read: missing, corrupt, truncated, unsupported version, unknown kind
EXIT_USAGE = 3  # a bad thresholds file, or PyDarshan missing for a Darshan log


class InputError(inputs.InputError):
    """Input that cannot be used, with one line naming the problem (and advise's own exit codes)."""

    def __init__(self, message: str, exit_code: int = EXIT_UNREADABLE):
        super().__init__(message)
        self.exit_code = exit_code
