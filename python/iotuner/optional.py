"""iotuner's optional parts (pyproject.toml's extras) and its dependencies, imported so that a missing or broken
one gives one line: what needs it, why it cannot be imported, and the exact command that installs it.

Any exception at import counts as missing, not only ImportError: on Python 3.13 PyDarshan's import raises
RuntimeError (it cannot find libdarshan-util.so), and a half-installed package can raise anything.
"""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import inputs


@dataclass(frozen=True)
class Part:
    what: str  # the package, as a user knows it
    extra: str  # its group in pyproject.toml's optional-dependencies
    requirements: tuple[str, ...]  # what `pip install` needs for it (the extra's lines for this part)


# By the module imported. The requirements are pyproject.toml's (tests/test_optional.py holds them to it).
PARTS = {
    "clang.cindex": Part("libclang's Python bindings", "kernel", ("libclang>=18", "clang-format>=15")),
    "darshan": Part("PyDarshan", "darshan", ("darshan>=3.4",)),
    "optuna_dashboard": Part("optuna-dashboard", "cluster", ("optuna-dashboard>=0.15",)),
    "gymnasium": Part("Gymnasium", "pretrain", ("gymnasium>=0.29",)),
}

# iotuner's own dependencies, by the module imported (pyproject.toml's dependencies)
DEPENDENCIES = {
    "rich": "rich>=13",
    "optuna": "optuna>=4,<6",
    "numpy": "numpy>=1.24",
    "scipy": "scipy>=1.10",
    "matplotlib": "matplotlib>=3.7",
    "sklearn": "scikit-learn>=1.3",
}


class Missing(inputs.InputError):
    """An optional part that cannot be imported; the message is the one line to print."""

    exit_code = 2


def pip_command(requirements) -> str:
    """The command that installs requirements into the Python running iotuner: `pip install ...` when the `pip`
    on the PATH is this Python's, else `/path/to/python -m pip install ...`."""
    here = Path(sys.executable).parent
    pip = shutil.which("pip")
    head = "pip" if pip and Path(pip).parent == here else f"{shlex.quote(sys.executable)} -m pip"
    return f"{head} install " + " ".join(shlex.quote(r) for r in requirements)


def reason(error: BaseException) -> str:
    """Why an import failed, in one short line (the exception's type where it is not the plain "not found")."""
    first = next((ln.strip() for ln in str(error).splitlines() if ln.strip()), "")
    if len(first) > 160:
        first = first[:157] + "..."
    if isinstance(error, ModuleNotFoundError) and first:
        return first
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def load(module: str, needed_for: str) -> ModuleType:
    """The optional module, or Missing naming what it is needed_for ("iotuner kernel", "reading Darshan logs")."""
    PARTS[module]  # noqa: B018 - a part missing from the table is iotuner's own error, raised here
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - broken counts as missing (see the module's docstring)
        raise Missing(message(module, needed_for, e)) from None


def message(module: str, needed_for: str, error: BaseException) -> str:
    part = PARTS[module]
    absent = isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] == module.split(".")[0]
    state = "not installed" if absent else "broken"
    return f"{needed_for} needs {part.what} ({state}: {reason(error)}): {pip_command(part.requirements)}"


def dependency_message(error: ModuleNotFoundError) -> str | None:
    """One line for a missing dependency of iotuner itself (a CMake install's bin/iotuner run by a python3 that
    lacks them), or None when error is about another module."""
    name = (error.name or "").split(".")[0]
    if name not in DEPENDENCIES:
        return None
    line = (
        f"iotuner: this Python ({sys.executable}) lacks iotuner's dependency {DEPENDENCIES[name]} "
        f"({reason(error)}): {pip_command(DEPENDENCIES.values())}"
    )
    if os.environ.get("IOTUNER_NATIVE_DIR") and _from_cmake_install():
        line += "; or set IOTUNER_PYTHON to a Python that has them"
    return line


def _from_cmake_install() -> bool:
    """Whether this package is a plain CMake install's (PREFIX/lib*/iotuner/python/iotuner, run by bin/iotuner)."""
    here = Path(__file__).resolve().parent
    return here.parent.name == "python" and here.parent.parent.name == "iotuner"
