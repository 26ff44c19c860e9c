"""How a trial's job is started: a launcher turns the application's command into
a job and runs it. One module per kind of launcher: `local` (mpiexec on this
machine, or the command as given) and `slurm` (a job step inside an
allocation, or a job of its own)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from ... import runner


class LaunchError(RuntimeError):
    pass


class Launcher(ABC):
    name: str

    @abstractmethod
    def command(self, app: Sequence[str]) -> list[str]:
        """The full command line that runs app (an argument vector: nothing is interpreted by a shell)."""

    def run(
        self, app: Sequence[str], *, config: Path | None, report: Path, cwd: Path, timeout: float | None
    ) -> runner.RunResult:
        return runner.run(self.command(app), config=config, report=report, capture=True, timeout=timeout, cwd=cwd)

    def describe(self) -> str:
        return self.name


def make(name: str, ranks: int, mpiexec: str | None = None, slurm=None, label: str = "iotuner") -> Launcher:
    """A launcher by name: local (mpiexec -n RANKS), none (the command as given), slurm."""
    if name in ("local", "none"):
        from .local import Direct, LocalMPI

        return LocalMPI(ranks, mpiexec) if name == "local" else Direct()
    if name == "slurm":
        from ..study_config import SlurmSpec
        from .slurm import Slurm

        return Slurm(ranks, slurm or SlurmSpec(), label)
    raise LaunchError(f"unknown launcher '{name}': use local, none or slurm")
