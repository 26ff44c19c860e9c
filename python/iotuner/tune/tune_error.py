"""The tuner's own error, shared by its layers (a strategy raises it as the engine does)."""

from __future__ import annotations


class TuneError(RuntimeError):
    """A study that cannot go on (a default that fails, a warm start that does not fit): one line for the user."""
