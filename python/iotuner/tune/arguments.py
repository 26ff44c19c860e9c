"""The options of `iotuner tune` and `iotuner worker`.

Kept apart from the tuner stack (Optuna, SciPy, SQLAlchemy), so `--help` and a mistyped option answer at
once. The strategies and stoppers are imported to list them with their own options: they defer what they
compute with (`iotuner.lazy`).
"""

from __future__ import annotations

import argparse
import re

from . import space as spaces
from . import strategies, synthetic


def parse_duration(text: str) -> float:
    """'90s', '30m', '2h', '1h30m', or plain seconds."""
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"'{text}' is not a duration like 90s, 30m, 2h or 1h30m")
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what to tune")
    g.add_argument(
        "--space",
        default=None,
        metavar="NAME|FILE",
        help=f"search space: {', '.join(spaces.BUILTIN)}, or a JSON file (default: romio; tunio with "
        f"--synthetic lustre)",
    )
    g.add_argument(
        "--strategy",
        default="auto",
        metavar="NAME",
        help=f"search strategy: {', '.join(strategies.names())} (default auto: the hybrid model's "
        f"prediction first when the machine has a calibration, then bayes's search)",
    )
    g.add_argument(
        "--strategy-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the strategy (repeatable), e.g. top=3 or calibration=FILE for hybrid",
    )
    g.add_argument(
        "--objective",
        default="perf",
        metavar="NAME",
        help="perf (TunIO: bandwidth weighted by the written and read shares, MiB/s; default), write-bw, "
        "read-bw, io-time, or regex:PATTERN (a number in the application's output)",
    )
    g.add_argument("--direction", choices=("max", "min"), help="for regex objectives (default max)")
    g.add_argument(
        "--objective-clock",
        choices=("phase", "calls"),
        help="the time a bandwidth or io-time is of: phase, each file from its open to its close (the "
        "default), or calls, the time inside the application's I/O calls (the default with "
        "--kernel: the kernel and the application then measure the same thing)",
    )
    g.add_argument(
        "--kernel",
        metavar="OUTDIR",
        help="run the trials on the application's I/O kernel (made by iotuner kernel -o OUTDIR), and the "
        "confirmation round on the application itself; the command after -- is then optional",
    )
    g.add_argument(
        "--baseline",
        metavar="FILE",
        help="the default settings: measured as the baseline, and under every trial's settings "
        "(default: none, the application's own)",
    )

    strategies.add_arguments(p)  # each strategy's own options, under its own heading

    g = p.add_argument_group("budget and measurement")
    g.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help="the study's total of trials that run (default 30 without --time or --runs); on "
        "--resume, a new total for the study, kept in it",
    )
    g.add_argument(
        "--runs",
        type=int,
        metavar="N",
        help="the study's total of application runs before the confirmation round: the default's, a "
        "strategy's training runs and the trials', with their repeats (strategies that train fit "
        "their training to it); on --resume, a new total, kept in the study",
    )
    g.add_argument(
        "--time",
        metavar="DURATION",
        help="the study's total tuning time across resumes, confirmation included, e.g. 30m or 1h30m; "
        "on --resume, a new total, kept in the study",
    )
    g.add_argument("--repeats", type=int, default=1, metavar="R", help="runs per trial, median kept (default 1)")
    g.add_argument(
        "--baseline-every",
        type=int,
        default=5,
        metavar="K",
        help="measure the default again after every K trials (default 5; 0: only at the start)",
    )
    g.add_argument(
        "--confirm-top",
        type=int,
        default=3,
        metavar="K",
        help="best configurations rerun at the end, interleaved with the default (default 3)",
    )
    g.add_argument(
        "--confirm-rounds",
        type=int,
        default=5,
        metavar="N",
        help="confirmation rounds (default 5); raised to the fewest with which a gain over --confirm-top "
        "candidates can be significant at all (4 for up to 3 candidates)",
    )
    g.add_argument(
        "--timeout",
        default="10m",
        metavar="DURATION",
        help="a run longer than this is killed and its trial fails (default 10m)",
    )

    g = p.add_argument_group("running the application")
    g.add_argument("--ranks", type=int, default=2, metavar="N", help="MPI ranks (default 2)")
    g.add_argument(
        "--launcher",
        default="local",
        choices=("local", "none", "slurm"),
        help="local: mpiexec -n RANKS; none: run the command as given; slurm: srun inside an allocation, "
        "else a Slurm job per trial (default local)",
    )
    g.add_argument(
        "--mpiexec",
        metavar="CMD",
        help='MPI launcher for --launcher local, with any options of its own ("mpirun.openmpi '
        '--allow-run-as-root"; -n N is added from --ranks); default: the first of mpiexec, mpirun, '
        "mpiexec.mpich, mpiexec.hydra on the PATH; mpiexec.mpich where mpiexec is a Debian alternative",
    )
    g.add_argument("--nodes", type=int, default=1, metavar="N", help="nodes the job spans (default 1)")
    g.add_argument(
        "--scratch",
        metavar="DIR",
        help="where runs write; {scratch} in the command is each run's directory (default: a "
        "temporary directory; with --launcher slurm, OUT/scratch, which compute nodes must see)",
    )
    g.add_argument("--keep", action="store_true", help="keep each run's output instead of cleaning it up")
    g.add_argument("--drop-caches", action="store_true", help="drop the page cache before every run (needs root)")
    g.add_argument(
        "--synthetic",
        metavar="MODEL",
        choices=sorted(synthetic.MODELS),
        help="tune a synthetic objective instead of a job (ufs, lustre, flat): for tests and benchmarks",
    )
    g.add_argument(
        "--synthetic-noise",
        type=float,
        default=0.05,
        metavar="SIGMA",
        help="log-normal noise of the synthetic objective (default 0.05)",
    )
    g.add_argument("--synthetic-delay", type=float, default=0.0, metavar="S", help="seconds per synthetic run")
    g.add_argument(
        "--replay",
        metavar="FILE",
        help="tune a recorded sweep (bench/sweep.py) instead of a job: each run draws one of the "
        "point's recorded runs; the space and baseline are the recording's. For benchmarks",
    )
    g.add_argument(
        "--simulate",
        metavar="PLATFORM",
        help="tune on the simulator instead of a job (iotuner simulate, docs/simulate.md): every trial "
        "replays the phases of --simulate-report at --ranks ranks on --nodes nodes of PLATFORM "
        "(here, a bundled platform such as lustre-template, or a platform file); no application runs",
    )
    g.add_argument(
        "--simulate-report", metavar="REPORT", help="with --simulate: the run report or Darshan log to replay"
    )

    g = p.add_argument_group("several workers, Slurm")
    g.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="N workers tune the study at once, each an ask/run/tell loop on the shared study (default 1); "
        "more can join any time with iotuner worker; 0: only create the study, for workers you "
        "start yourself",
    )
    g.add_argument(
        "--submit",
        action="store_true",
        help="with --launcher slurm: submit the workers as a Slurm job array (each runs its trials as job "
        "steps in its allocation) and watch them; the study storage must be reachable from the nodes",
    )
    g.add_argument("--partition", metavar="NAME", help="Slurm partition")
    g.add_argument("--account", metavar="NAME", help="Slurm account")
    g.add_argument("--time-limit", metavar="TIME", help="Slurm time limit of each job (default: from --timeout)")
    g.add_argument("--tasks-per-node", type=int, metavar="N", help="Slurm tasks per node")
    g.add_argument(
        "--sbatch-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="another sbatch option, as one argument (repeat it: --sbatch-arg=--qos=high)",
    )
    g.add_argument(
        "--srun-mpi",
        default="pmi2",
        metavar="TYPE",
        help="srun's --mpi plugin for the trials (default pmi2, as Debian's MPICH needs; cray_shasta on "
        "HPE Cray EX; none: leave it to the site's default)",
    )

    g = p.add_argument_group("the study")
    g.add_argument(
        "--study",
        metavar="NAME",
        help="study name (default: the program's name, e.g. h5ior for -- h5ior ...; synthetic-ufs for "
        "--synthetic ufs), so tuning two programs in one directory makes two studies; with --resume, "
        "the only study found in --out or in the iotuner-* directories here",
    )
    g.add_argument(
        "--storage",
        metavar="URL",
        help="any SQLAlchemy URL, e.g. postgresql://user@host/db (default: $IOTUNER_STORAGE, else "
        "sqlite:///OUT/study.db); a password is never shown: leave it out of the URL and give it "
        "with PGPASSWORD or ~/.pgpass, or put the whole URL in IOTUNER_STORAGE",
    )
    g.add_argument("--out", metavar="DIR", help="where results go (default: iotuner-STUDY)")
    g.add_argument(
        "--resume",
        action="store_true",
        help="continue the study: its settings come from the storage; --trials / --time set new totals "
        "(the search goes on until them, and the confirmation round is redone if it ran more trials)",
    )
    g.add_argument("--seed", type=int, default=0, help="random seed of the strategy (default 0)")
    g.add_argument("--eval-log", metavar="FILE", help="append one JSON line per run (label, value, time)")
    shown = g.add_mutually_exclusive_group()
    shown.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="every knob of every trial (by default a trial's line names the knobs that differ from the "
        "default settings, as many as fit), and every run of the confirmation round",
    )
    shown.add_argument(
        "-q", "--quiet", action="store_true", help="no line per trial: the header, notes and the verdict only"
    )
    g.add_argument(
        "--heartbeat",
        type=int,
        default=10,
        metavar="S",
        help="seconds between a running trial's heartbeats in the study storage; a trial whose worker "
        "is silent for 3 heartbeats is failed and run again (up to 3 starts; default 10)",
    )
    g.add_argument(
        "--production-runtime",
        metavar="DURATION",
        help="run time of one production run with the default settings, for the viability point (the "
        "production runs after which tuning has paid for itself); default: the default's measured "
        "run time",
    )
    g.add_argument(
        "--production-runs",
        type=int,
        metavar="N",
        help="production runs planned with the tuned settings: the lifecycle curve runs to them, and "
        "(unless --stop says otherwise) tuning stops when more of it could not pay for itself "
        "within them",
    )
    early = strategies.stopper_descriptions()
    g.add_argument(
        "--stop",
        choices=list(early),
        metavar="NAME",
        help="early stopper, decided after every iteration (a generation of a genetic algorithm, else a "
        "trial): "
        + "; ".join(f"{name}: {what}" for name, what in early.items()).replace("%", "%%")
        + ". Default: production-runs with --production-runs, else the strategy's own (learned for "
        "the tunio strategies), else none",
    )
    g.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- APP ARGS",
        help="the application (without launcher); {scratch} becomes each run's directory",
    )


def add_worker_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--study", required=True, metavar="NAME", help="the study to work on")
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--storage",
        metavar="URL",
        help="its storage, an SQLAlchemy URL (default: $IOTUNER_STORAGE; "
        "a URL with a password is better there, or in --storage-file, "
        "than on a command line others can see)",
    )
    src.add_argument("--storage-file", metavar="FILE", help="a file only you can read that holds the storage URL")
    p.add_argument(
        "--launcher",
        choices=("local", "none", "slurm"),
        help="how this worker starts its trials (default: the study's launcher)",
    )
    p.add_argument(
        "--scratch",
        metavar="DIR",
        help="where this worker's runs write (default: the study's, or a temporary directory)",
    )
    p.add_argument("--out", metavar="DIR", help="where this worker writes the results (default: the study's)")
    p.add_argument("--heartbeat", type=int, default=10, metavar="S", help="seconds between heartbeats (default 10)")
    p.add_argument("--eval-log", metavar="FILE", help="append one JSON line per run (label, value, time)")
