"""The iotuner commands, one module each.

A command module defines HELP (one line for `iotuner --help`), ORDER (its
place in that list), optionally DESCRIPTION and EPILOG, `add_arguments(p)`
and `main(args) -> int`. Modules are found in this package, so a new command
is one new module. Only the chosen command's module builds its arguments, and
each imports what is heavy (rich, Optuna, SciPy) inside `main` or
`add_arguments`: `iotuner --help`, `check` and `run` start fast.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def names() -> list[str]:
    """Command names, in the order `iotuner --help` lists them."""
    mods = [load(m.name) for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return [name_of(m) for m in sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), name_of(m)))]


def name_of(module: ModuleType) -> str:
    return getattr(module, "NAME", module.__name__.rsplit(".", 1)[-1])


def load(module_name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{module_name}")


def get(name: str) -> ModuleType | None:
    """The module of a command name (module names use '_' where commands use '-')."""
    try:
        return load(name.replace("-", "_"))
    except ModuleNotFoundError as e:
        if e.name == f"{__name__}.{name.replace('-', '_')}":
            return None
        raise
