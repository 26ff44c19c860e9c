"""Modules imported when first used, as Optuna's `_imports._LazyImport` defers its own heavy imports.

`np = lazy("numpy")` at the top of a module costs nothing until `np.something` is looked up, so a module
that needs Optuna or NumPy only in some of its functions can be imported by `iotuner tune --help` (which
lists the strategies and stoppers with their options) without loading them.
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class _Lazy(types.ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(name)

    def _load(self) -> types.ModuleType:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return module

    def __getattr__(self, item: str) -> Any:
        return getattr(self._load(), item)


def lazy(name: str) -> Any:
    """The module `name`, imported at its first attribute lookup."""
    return _Lazy(name)
