"""A study's configuration: typed, versioned, stored once in the study.

Everything a worker needs to take part in a study comes from here, so a
study resumed (or joined by another worker) runs exactly as it was created.
The budget is kept apart (`Budget`): a user may raise it on resume.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

VERSION = 4  # 3: every run a record of its own; 4: search trials alone in the study, the rest in its companion


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Budget:
    """The study's totals, across resumes and workers: trials that ran, tuning time, and application runs
    before the confirmation round (the default's, a strategy's training and the trials', with their
    repeats: what the search costs in runs)."""

    trials: int | None = None
    seconds: float | None = None
    runs: int | None = None

    def describe(self) -> str:
        parts = [
            f"{self.trials} trials" if self.trials else "",
            f"{self.seconds:.0f} s" if self.seconds else "",
            f"{self.runs} application runs" if self.runs else "",
        ]
        return ", ".join(p for p in parts if p) or "unbounded"


@dataclass(frozen=True)
class ObjectiveSpec:
    name: str = "perf"
    direction: str = "maximize"
    unit: str = "MiB/s"
    pattern: str | None = None
    clock: str = "phase"  # the time a bandwidth or io-time is of: "phase" (open to close) or "calls"


@dataclass(frozen=True)
class SyntheticSpec:
    """A model instead of a job (tests, benchmarks)."""

    model: str
    noise: float = 0.05
    delay: float = 0.0


@dataclass(frozen=True)
class ReplaySpec:
    """A recorded sweep (bench/sweep.py) instead of a job: each run draws one of the point's recorded runs.
    The digest ties the study to the file's content, so a resumed study does not replay another recording."""

    path: str
    sha256: str = ""


@dataclass(frozen=True)
class SlurmSpec:
    """What each job asks Slurm for."""

    nodes: int = 1
    tasks_per_node: int | None = None
    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None  # Slurm's format (minutes, or [D-]HH:MM:SS); default: the trial --timeout
    sbatch_args: tuple[str, ...] = ()
    mpi: str = "pmi2"

    def sbatch_options(self, *, job_name: str, ntasks: int, timeout_s: float | None = None) -> list[str]:
        opts = [f"--job-name={job_name}", f"--nodes={self.nodes}"]
        if self.tasks_per_node:
            opts.append(f"--ntasks-per-node={self.tasks_per_node}")
        else:
            opts.append(f"--ntasks={ntasks}")
        if self.partition:
            opts.append(f"--partition={self.partition}")
        if self.account:
            opts.append(f"--account={self.account}")
        limit = self.time_limit or (str(max(1, math.ceil(timeout_s / 60) + 1)) if timeout_s else None)
        if limit:
            opts.append(f"--time={limit}")
        return opts + list(self.sbatch_args)


@dataclass(frozen=True)
class StudyConfig:
    space: dict  # the search space as JSON (SearchSpace.to_json)
    strategy: str = "bayes"
    strategy_options: dict = field(default_factory=dict)
    seed: int = 0
    objective: ObjectiveSpec = ObjectiveSpec()
    baseline: dict = field(default_factory=lambda: {"version": 1})
    # measurement
    repeats: int = 1
    baseline_every: int = 5
    confirm_top: int = 3
    confirm_rounds: int = 5
    alpha: float = 0.05
    # the job
    app: tuple[str, ...] = ()  # what trials run: the application, or its I/O kernel (--kernel)
    confirm_app: tuple[str, ...] = ()  # what the confirmation round runs, when not app: the application itself
    kernel: str | None = None  # the I/O kernel's directory (iotuner kernel -o), when trials run one
    launcher: str = "local"
    ranks: int = 2
    mpiexec: str = "mpiexec.mpich"
    nodes: int = 1
    scratch: str | None = None
    timeout_s: float | None = 600.0
    keep: bool = False
    drop_caches: bool = False
    synthetic: SyntheticSpec | None = None
    replay: ReplaySpec | None = None
    simulate: dict | None = None  # --simulate: the simulator answers (tune/simulated.py: platform, report, digest)
    slurm: SlurmSpec | None = None  # with launcher "slurm"
    # what the tuning is for: the run time of one production run (viability), and how many are planned
    production_runtime_s: float | None = None
    production_runs: int | None = None
    stop: str | None = None  # the early stopper (`stop.register_stopper`); None: the strategy's default
    out: str = ""
    version: int = VERSION
    created: str = ""

    def __post_init__(self):
        if self.repeats < 1 or self.confirm_rounds < 1 or self.confirm_top < 1:
            raise ConfigError("--repeats, --confirm-top and --confirm-rounds must be at least 1")
        if self.baseline_every < 0:
            raise ConfigError("--baseline-every must be 0 or more")
        if not 0 < self.alpha < 1:
            raise ConfigError("alpha must be between 0 and 1")
        if self.production_runs is not None and self.production_runs < 1:
            raise ConfigError("--production-runs must be at least 1")
        if self.stop == "production-runs" and not self.production_runs:
            raise ConfigError("--stop production-runs needs --production-runs N (the production runs planned)")
        if sum(x is not None for x in (self.synthetic, self.replay, self.simulate)) > 1:
            raise ConfigError("give one of --synthetic MODEL, --replay FILE and --simulate PLATFORM")
        if not self.app and self.offline is False:
            raise ConfigError(
                "give the application after --, e.g. iotuner tune -- ./vpicio -o {scratch}; "
                "or --synthetic MODEL, --replay FILE or --simulate PLATFORM"
            )

    @property
    def offline(self) -> bool:
        """Runs answer without a job (a model or a recording): no scratch, no launcher."""
        return self.synthetic is not None or self.replay is not None or self.simulate is not None

    def stamped(self) -> StudyConfig:
        return replace(self, created=self.created or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["app"] = list(self.app)
        doc["confirm_app"] = list(self.confirm_app)
        if self.slurm:
            doc["slurm"]["sbatch_args"] = list(self.slurm.sbatch_args)
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> StudyConfig:
        if not isinstance(doc, dict):
            raise ConfigError("the study has no iotuner configuration: it was not made by iotuner tune")
        if doc.get("version") != VERSION:
            raise ConfigError(
                f"the study was made by another iotuner (configuration version {doc.get('version')}, "
                f"this one reads {VERSION}): start a new study"
            )
        known = {f.name for f in fields(cls)}
        unknown = set(doc) - known
        if unknown:
            raise ConfigError(f"the study's configuration has fields this iotuner does not know: {sorted(unknown)}")
        args = dict(doc)
        args["objective"] = ObjectiveSpec(**doc.get("objective") or {})
        args["synthetic"] = SyntheticSpec(**doc["synthetic"]) if doc.get("synthetic") else None
        args["replay"] = ReplaySpec(**doc["replay"]) if doc.get("replay") else None
        args["slurm"] = (
            SlurmSpec(**{**doc["slurm"], "sbatch_args": tuple(doc["slurm"].get("sbatch_args", ()))})
            if doc.get("slurm")
            else None
        )
        args["app"] = tuple(doc.get("app") or ())
        args["confirm_app"] = tuple(doc.get("confirm_app") or ())
        try:
            return cls(**args)
        except TypeError as e:
            raise ConfigError(f"the study's configuration is damaged: {e}") from None
