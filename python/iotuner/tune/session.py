"""`iotuner tune`: build a study from the command line (or resume one), run it,
show progress and the outcome."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

from .. import render, settings
from . import launch, objective as objectives, results, space as spaces, strategies, synthetic
from .config import STOPPERS, Budget, ConfigError, ObjectiveSpec, SlurmSpec, StudyConfig, SyntheticSpec
from .evaluate import JobEvaluator, KernelEvaluator
from .store import Store, StudyError
from .tuner import SAME_AS_DEFAULT, Tuner, TuneError


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
    g.add_argument("--space", default=None, metavar="NAME|FILE",
                   help=f"search space: {', '.join(spaces.BUILTIN)}, or a JSON file (default: romio; tunio with "
                        f"--synthetic lustre)")
    g.add_argument("--strategy", default="bayes", metavar="NAME",
                   help=f"search strategy: {', '.join(strategies.names())} (default bayes)")
    g.add_argument("--strategy-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the strategy (repeatable), e.g. top=3 or calibration=FILE for hybrid")
    g.add_argument("--objective", default="perf", metavar="NAME",
                   help="perf (TunIO: bandwidth weighted by the written and read shares, MB/s; default), write-bw, "
                        "read-bw, io-time, or regex:PATTERN (a number in the application's output)")
    g.add_argument("--direction", choices=("max", "min"), help="for regex objectives (default max)")
    g.add_argument("--kernel", metavar="OUTDIR",
                   help="run the trials on the application's I/O kernel (made by iotuner kernel -o OUTDIR), and the "
                        "confirmation round on the application itself; the command after -- is then optional")
    g.add_argument("--baseline", metavar="FILE",
                   help="the default settings: measured as the baseline, and under every trial's settings "
                        "(default: none, the application's own)")

    g = p.add_argument_group("budget and measurement")
    g.add_argument("--trials", type=int, metavar="N",
                   help="the study's total of trials that run (default 30 without --time); on --resume, a new "
                        "total for the study, kept in it")
    g.add_argument("--time", metavar="DURATION",
                   help="the study's total tuning time across resumes, confirmation included, e.g. 30m or 1h30m; "
                        "on --resume, a new total, kept in the study")
    g.add_argument("--repeats", type=int, default=1, metavar="R", help="runs per trial, median kept (default 1)")
    g.add_argument("--baseline-every", type=int, default=5, metavar="K",
                   help="measure the default again after every K trials (default 5; 0: only at the start)")
    g.add_argument("--confirm-top", type=int, default=3, metavar="K",
                   help="best configurations rerun at the end, interleaved with the default (default 3)")
    g.add_argument("--confirm-rounds", type=int, default=5, metavar="N",
                   help="confirmation rounds (default 5); raised to the fewest with which a gain over --confirm-top "
                        "candidates can be significant at all (4 for up to 3 candidates)")
    g.add_argument("--timeout", default="10m", metavar="DURATION",
                   help="a run longer than this is killed and its trial fails (default 10m)")

    g = p.add_argument_group("running the application")
    g.add_argument("--ranks", type=int, default=2, metavar="N", help="MPI ranks (default 2)")
    g.add_argument("--launcher", default="local", choices=("local", "none", "slurm"),
                   help="local: mpiexec -n RANKS; none: run the command as given; slurm: srun inside an allocation, "
                        "else a Slurm job per trial (default local)")
    g.add_argument("--mpiexec", default="mpiexec.mpich", metavar="CMD", help="MPI launcher (default mpiexec.mpich)")
    g.add_argument("--nodes", type=int, default=1, metavar="N", help="nodes the job spans (default 1)")
    g.add_argument("--scratch", metavar="DIR",
                   help="where runs write; {scratch} in the command is each run's directory (default: a "
                        "temporary directory; with --launcher slurm, OUT/scratch, which compute nodes must see)")
    g.add_argument("--keep", action="store_true", help="keep each run's output instead of cleaning it up")
    g.add_argument("--drop-caches", action="store_true", help="drop the page cache before every run (needs root)")
    g.add_argument("--synthetic", metavar="MODEL", choices=sorted(synthetic.MODELS),
                   help="tune a synthetic objective instead of a job (ufs, lustre, flat): for tests and benchmarks")
    g.add_argument("--synthetic-noise", type=float, default=0.05, metavar="SIGMA",
                   help="log-normal noise of the synthetic objective (default 0.05)")
    g.add_argument("--synthetic-delay", type=float, default=0.0, metavar="S", help="seconds per synthetic run")

    g = p.add_argument_group("several workers, Slurm")
    g.add_argument("--workers", type=int, default=1, metavar="N",
                   help="N workers tune the study at once, each an ask/run/tell loop on the shared study (default 1); "
                        "more can join any time with iotuner worker; 0: only create the study, for workers you "
                        "start yourself")
    g.add_argument("--submit", action="store_true",
                   help="with --launcher slurm: submit the workers as a Slurm job array (each runs its trials as job "
                        "steps in its allocation) and watch them; the study storage must be reachable from the nodes")
    g.add_argument("--partition", metavar="NAME", help="Slurm partition")
    g.add_argument("--account", metavar="NAME", help="Slurm account")
    g.add_argument("--time-limit", metavar="TIME", help="Slurm time limit of each job (default: from --timeout)")
    g.add_argument("--tasks-per-node", type=int, metavar="N", help="Slurm tasks per node")
    g.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                   help="another sbatch option, as one argument (repeat it: --sbatch-arg=--qos=high)")
    g.add_argument("--srun-mpi", default="pmi2", metavar="TYPE",
                   help="srun's --mpi plugin for the trials (default pmi2, as Debian's MPICH needs; cray_shasta on "
                        "HPE Cray EX; none: leave it to the site's default)")

    g = p.add_argument_group("the study")
    g.add_argument("--study", default="iotuner", metavar="NAME", help="study name (default iotuner)")
    g.add_argument("--storage", metavar="URL",
                   help="any SQLAlchemy URL, e.g. postgresql://host/db (default: sqlite:///OUT/study.db)")
    g.add_argument("--out", metavar="DIR", help="where results go (default: iotuner-STUDY)")
    g.add_argument("--resume", action="store_true",
                   help="continue the study: its settings come from the storage; --trials / --time set new totals "
                        "(the search goes on until them, and the confirmation round is redone if it ran more trials)")
    g.add_argument("--seed", type=int, default=0, help="random seed of the strategy (default 0)")
    g.add_argument("--eval-log", metavar="FILE", help="append one JSON line per run (label, value, time)")
    g.add_argument("--heartbeat", type=int, default=10, metavar="S",
                   help="seconds between a running trial's heartbeats in the study storage; a trial whose worker "
                        "is silent for 3 heartbeats is failed and run again once (default 10)")
    g.add_argument("--production-runtime", metavar="DURATION",
                   help="run time of one production run with the default settings, for the viability point (the "
                        "production runs after which tuning has paid for itself); default: the default's measured "
                        "run time")
    g.add_argument("--production-runs", type=int, metavar="N",
                   help="production runs planned with the tuned settings: the lifecycle curve runs to them, and "
                        "(unless --stop says otherwise) tuning stops when more of it could not pay for itself "
                        "within them")
    g.add_argument("--stop", choices=STOPPERS,
                   help="early stopper, decided after every iteration (a generation of a genetic algorithm, else a "
                        "trial): learned (TunIO's, trained on tuning curves: stops when more tuning is not "
                        "expected to raise the return on tuning investment), heuristic (less than 5%% gain over 5 "
                        "iterations), production-runs (needs --production-runs), none. Default: production-runs "
                        "with --production-runs, else learned for the tunio strategies, else none")
    g.add_argument("command", nargs=argparse.REMAINDER, metavar="-- APP ARGS",
                   help="the application (without launcher); {scratch} becomes each run's directory")


def _config_from_args(args: argparse.Namespace, out: Path) -> tuple[StudyConfig, Budget]:
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    confirm_app: list[str] = []
    if args.kernel:
        from .. import kernel as kernels
        k = kernels.load(args.kernel)  # KernelError is a ValueError: reported as bad input
        confirm_app = list(command) or k.app_command()
        command = k.command()
        if not k.usable:
            print(f"iotuner tune: the kernel in {args.kernel} is not used ({k.reason}); the trials run the "
                  f"application", file=sys.stderr)
    space_spec = args.space or ("tunio" if args.synthetic == "lustre" else "romio")
    space = spaces.load(space_spec)
    obj = objectives.parse(args.objective, args.direction)
    options = {}
    for item in args.strategy_option:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise SystemExit(f"iotuner tune: --strategy-option {item!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    strategies.make(args.strategy, space, args.seed, options)  # an unknown strategy or bad options fail here
    baseline = settings.load(args.baseline) if args.baseline else {"version": 1}
    trials = args.trials if args.trials is not None else (None if args.time else 30)
    config = StudyConfig(
        space=space.to_json(), strategy=args.strategy, strategy_options=options, seed=args.seed, baseline=baseline,
        objective=ObjectiveSpec(obj.name, obj.direction, obj.unit, obj.pattern),
        repeats=args.repeats, baseline_every=args.baseline_every, confirm_top=args.confirm_top,
        confirm_rounds=args.confirm_rounds, app=tuple(command), launcher=args.launcher, ranks=args.ranks,
        confirm_app=tuple(confirm_app) if confirm_app != list(command) else (),
        kernel=str(Path(args.kernel).resolve()) if args.kernel else None,
        mpiexec=args.mpiexec, nodes=args.nodes, scratch=args.scratch, timeout_s=parse_duration(args.timeout),
        keep=args.keep, drop_caches=args.drop_caches,
        synthetic=SyntheticSpec(args.synthetic, args.synthetic_noise, args.synthetic_delay) if args.synthetic else None,
        slurm=_slurm_spec(args) if args.launcher == "slurm" else None,
        production_runtime_s=parse_duration(args.production_runtime) if args.production_runtime else None,
        production_runs=args.production_runs,
        stop=args.stop or ("production-runs" if args.production_runs else None), out=str(out))
    return config, Budget(trials, parse_duration(args.time) if args.time else None)


def _slurm_spec(args: argparse.Namespace) -> SlurmSpec:
    return SlurmSpec(nodes=args.nodes, tasks_per_node=args.tasks_per_node, partition=args.partition,
                     account=args.account, time_limit=args.time_limit, sbatch_args=tuple(args.sbatch_arg),
                     mpi=args.srun_mpi)


def add_worker_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--study", required=True, metavar="NAME", help="the study to work on")
    p.add_argument("--storage", required=True, metavar="URL", help="its storage (an SQLAlchemy URL)")
    p.add_argument("--launcher", choices=("local", "none", "slurm"),
                   help="how this worker starts its trials (default: the study's launcher)")
    p.add_argument("--scratch", metavar="DIR", help="where this worker's runs write (default: the study's, or a "
                                                    "temporary directory)")
    p.add_argument("--out", metavar="DIR", help="where this worker writes the results (default: the study's)")
    p.add_argument("--heartbeat", type=int, default=10, metavar="S", help="seconds between heartbeats (default 10)")
    p.add_argument("--eval-log", metavar="FILE", help="append one JSON line per run (label, value, time)")


def _objective(config: StudyConfig) -> objectives.Objective:
    o = config.objective
    return objectives.Objective(o.name, o.direction, o.unit, o.pattern)


def _evaluator(config: StudyConfig, obj: objectives.Objective, scratch: Path | None, launcher: str, study: str):
    syn = config.synthetic
    if syn:
        return synthetic.SyntheticEvaluator(synthetic.model(syn.model), obj, syn.noise, syn.delay, config.seed)
    how = launch.make(launcher, config.ranks, config.mpiexec, config.slurm, label=f"iotuner-{study}")
    trials = JobEvaluator(config.app, how, obj, scratch, config.timeout_s, config.keep, config.drop_caches)
    if not config.confirm_app:
        return trials
    app = JobEvaluator(config.confirm_app, how, obj, scratch, config.timeout_s, config.keep, config.drop_caches)
    return KernelEvaluator(trials, app)


def _fmt(value: float | None, obj: objectives.Objective) -> str:
    if value is None:
        return "-"
    unit = f" {obj.unit}" if obj.unit else ""
    return f"{value:,.1f}{unit}" if abs(value) >= 10 else f"{value:.4g}{unit}"


def _progress_printer(console: Console, obj: objectives.Objective):
    shown: set[str] = set()

    def show(e: dict) -> None:
        when = f"[dim]{results.fmt_time(e.get('clock')):>7}[/dim]"
        if e["kind"] == "note":
            shown.add(e["text"])
            console.print(f"[yellow]note:[/yellow] {e['text']}")
        elif e["kind"] == "baseline":
            if e.get("error"):
                console.print(Text(f"baseline run failed: {e['error'][:300]}", style="red"))
            else:
                console.print(f"{when}  baseline ({e['reason']}): {_fmt(e['value'], obj)}; default now "
                              f"{_fmt(e['default'], obj)}")
        elif e["kind"] == "training":
            knobs = " ".join(f"{k}={json.dumps(v)}" for k, v in e["settings"].items())
            result = "[red]failed[/red]" if e.get("error") else _fmt(e["value"], obj)
            console.print(Text.from_markup(f"{when}  training {e['number']:>3}  {result}  ") + Text(knobs, style="dim"))
        elif e["kind"] == "trial":
            head = f"{when}  trial {e['number']:>3}"
            budget = f"{e['done']}/{e['budget']}" if e.get("budget") else f"{e['done']}"
            tail = f"[{budget}, ~{results.fmt_time(e.get('left_s'))} left]"
            knobs = " ".join(f"{k}={json.dumps(v)}" for k, v in e["settings"].items())
            if e.get("error"):
                console.print(Text.from_markup(f"{head}  [red]failed[/red]  {tail}  ") +
                              Text(f"{knobs}\n          {e['error'][-300:]}", style="dim"))
                return
            dup = "" if e.get("duplicate_of") is None else " (took effect as the default settings)" \
                if e["duplicate_of"] == SAME_AS_DEFAULT else f" (same as trial {e['duplicate_of']})"
            gain = f" ({e['gain']:.2f}x default)" if e.get("gain") else ""
            console.print(Text.from_markup(f"{head}  {_fmt(e['value'], obj)}{dup}  best {_fmt(e['best'], obj)}"
                                           f"{gain}  {tail}  ") + Text(knobs, style="dim"))
        elif e["kind"] == "confirm":
            who = "default" if e["trial"] is None else f"trial {e['trial']}"
            console.print(f"{when}  confirm {e['round']}/{e['rounds']} {who}: "
                          f"{_fmt(e['value'], obj) if e.get('value') is not None else 'failed'}")
    show.shown = shown
    return show


def _open(args: argparse.Namespace, console: Console) -> tuple[Store, Path, str]:
    out = Path(args.out or f"iotuner-{args.study}").resolve()
    storage = args.storage or f"sqlite:///{out / 'study.db'}"
    if args.resume:
        store = Store.open(storage, args.study, heartbeat_s=args.heartbeat)
        if args.trials is not None or args.time:  # new totals for the study, kept in it
            b = store.budget
            store.set_budget(Budget(args.trials if args.trials is not None else b.trials,
                                    parse_duration(args.time) if args.time else b.seconds))
        out = Path(store.config.out)
        console.print(f"resuming study [bold]{args.study}[/bold]: {len(store.completed())} completed trials, "
                      f"{len(store.default_runs)} runs of the default, {results.fmt_time(store.clock())} of "
                      f"tuning so far")
    else:
        config, budget = _config_from_args(args, out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StudyError(f"cannot create the output directory {out}: {e.strerror}") from None
        store = Store.create(storage, args.study, config, budget, heartbeat_s=args.heartbeat)
    return store, out, storage


def run(args: argparse.Namespace) -> int:
    """iotuner tune: create (or resume) the study, work on it with --workers workers, write the results."""
    console = render.console_for_output()
    try:
        if args.workers < 0:
            raise ValueError("--workers must be 0 or more")
        if args.submit and args.launcher != "slurm" and not args.resume:
            raise ValueError("--submit needs --launcher slurm")
        store, out, storage = _open(args, console)
    except (ValueError, StudyError, ConfigError, spaces.SpaceError, settings.SettingsError,
            objectives.ObjectiveError, launch.LaunchError, KeyError) as e:
        print(f"iotuner tune: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    if args.workers == 0:
        from . import workers
        command = workers.worker_command(store.name, storage, args.heartbeat)[3:]  # after python -m iotuner
        console.print(f"study [bold]{store.name}[/bold] is ready in {storage}; start workers with\n  iotuner "
                      f"{workers.slurm.quote_all(command)}\nand write "
                      f"its results at the end with\n  iotuner tune --resume --study {store.name} --storage {storage}")
        return 0
    if args.submit:
        from . import workers
        return workers.submit(store, storage, out, args.workers, args.heartbeat, console,
                              lambda outcome: _finish(store, outcome, out, console, storage))
    extra = None
    if args.workers > 1:
        from . import workers
        extra = workers.spawn_local(store.name, storage, out, args.workers - 1, args.heartbeat)
        console.print(f"{args.workers} workers: this one, and {args.workers - 1} more logging to "
                      f"{out}/worker-*.log")
    try:
        outcome = _work(store, console, storage, launcher=store.config.launcher, scratch=None,
                        eval_log=args.eval_log)
    finally:
        if extra is not None:
            extra.wait()
    if isinstance(outcome, int):
        return outcome
    return _finish(store, outcome, out, console, storage)


def worker(args: argparse.Namespace) -> int:
    """iotuner worker: one more worker on an existing study."""
    console = render.console_for_output()
    try:
        store = Store.open(args.storage, args.study, heartbeat_s=args.heartbeat)
    except StudyError as e:
        print(f"iotuner worker: {e}", file=sys.stderr)
        return 2
    out = Path(args.out or store.config.out)
    console.print(f"worker on study [bold]{args.study}[/bold] ({store.trials_run()} trials run so far)")
    outcome = _work(store, console, args.storage, launcher=args.launcher or store.config.launcher,
                    scratch=args.scratch, eval_log=args.eval_log)
    if isinstance(outcome, int):
        return outcome
    return _finish(store, outcome, out, console, args.storage)


def _work(store: Store, console: Console, storage: str, *, launcher: str, scratch: str | None,
          eval_log: str | None):
    """This process's worker loop on the study: its Outcome, or an exit status."""
    config = store.config
    obj = _objective(config)
    space = spaces.from_json(config.space)
    scratch_dir, scratch_tmp = _scratch(config, store, console, scratch, launcher)
    try:
        evaluator = _evaluator(config, obj, scratch_dir, launcher, store.name)
        strategy = strategies.make(config.strategy, space, store.worker_seed(config.seed), config.strategy_options)
    except (launch.LaunchError, KeyError, ValueError) as e:
        print(f"iotuner tune: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    what = f"synthetic model '{config.synthetic.model}'" if config.synthetic else \
        f"{evaluator.launcher.describe()} {' '.join(config.app)}"
    if config.confirm_app:
        what += f"\n  (the I/O kernel of {' '.join(config.confirm_app)}, which the confirmation round runs)"
    console.print(f"tuning [bold]{what}[/bold]\n  space {space.name} ({len(space.dimensions)} dimensions, "
                  f"{space.size():,} points), strategy {config.strategy}, objective {obj.name}, "
                  f"{config.repeats} run(s) per trial, budget {store.budget.describe()}\n  study {store.name} in "
                  f"{storage}")
    printer = _progress_printer(console, obj)
    tuner = Tuner(store, evaluator, space, obj, strategy, printer, Path(eval_log) if eval_log else None)
    try:
        outcome = tuner.run(str(scratch_tmp) if scratch_tmp else None)
    except TuneError as e:
        print(f"iotuner tune: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        console.print(f"\ninterrupted: completed trials are saved; continue with "
                      f"iotuner tune --resume --study {store.name} --storage {storage}")
        return 130
    except Exception as e:  # the study database failed under us (a lost connection, a full disk)
        why = storage_failure(e)
        if why is None:
            raise
        print(f"iotuner tune: the study storage failed: {why}; completed runs are saved, continue with "
              f"iotuner tune --resume --study {store.name} --storage {storage} once it is back", file=sys.stderr)
        return 1
    finally:
        if scratch_tmp:
            shutil.rmtree(scratch_tmp, ignore_errors=True)
        elif scratch_dir is not None and scratch_dir.name.startswith("w-"):
            with contextlib.suppress(OSError):
                scratch_dir.rmdir()  # this worker's directory in a given --scratch, when its runs left nothing
    outcome.notes.extend(n for n in getattr(evaluator, "notes", []) if n not in outcome.notes)
    outcome.shown = printer.shown  # notes already printed while tuning
    return outcome


def storage_failure(e: BaseException) -> str | None:
    """What went wrong, when an exception is the study database's (None: it is not)."""
    import optuna
    import sqlalchemy
    if not isinstance(e, (optuna.exceptions.StorageInternalError, sqlalchemy.exc.SQLAlchemyError)):
        return None
    cause = e
    while cause.__cause__ is not None or getattr(cause, "orig", None) is not None:  # the driver's own words
        cause = getattr(cause, "orig", None) or cause.__cause__
    text = str(cause).strip().splitlines()
    return text[0] if text else type(cause).__name__


def _finish(store: Store, outcome, out: Path, console: Console, storage: str) -> int:
    store.refresh()
    total = store.tuning_time()
    try:
        summary = results.write_all(store, _objective(store.config), outcome, out, total)
    except OSError as e:
        print(f"iotuner tune: the study is complete and saved in {storage}, but its results cannot be written to "
              f"{out}: {e.strerror}. Free space or give another --out, then run iotuner tune --resume --study "
              f"{store.name} --storage {storage} to write them", file=sys.stderr)
        return 1
    _print_outcome(console, store, _objective(store.config), outcome, summary, out)
    try:  # the page to share: curve, verdict, RoTI, importance, every run
        from .. import htmlreport
        htmlreport.write(htmlreport.render_study(out), out / "report.html")
        console.print(f"report: {out / 'report.html'}")
    except (OSError, ValueError) as e:
        console.print(f"[yellow]note:[/yellow] no HTML report: {e}")
    return 0


def _scratch(config: StudyConfig, store: Store, console: Console, scratch: str | None, launcher: str
             ) -> tuple[Path | None, Path | None]:
    """(where runs write, the temporary directory to remove at the end). Without --scratch, a temporary
    directory per session (OUT/scratch/SESSION for Slurm jobs, which compute nodes must see); one a killed
    tuner left on this host is removed now."""
    for dead in store.dead_sessions_here():
        if dead.scratch and Path(dead.scratch).name.startswith("iotuner-scratch-") and Path(dead.scratch).exists():
            shutil.rmtree(dead.scratch, ignore_errors=True)
            console.print(f"[dim]removed {dead.scratch}, left by a stopped tuner[/dim]")
    given = scratch or config.scratch
    if given:
        # each worker in a directory of its own: run labels are per worker, the directory may be shared
        for left in Path(given).glob(f"w-{store.session.host}-*"):
            pid = left.name.rsplit("-", 1)[1]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(left, ignore_errors=True)
                console.print(f"[dim]removed {left}, left by a stopped worker[/dim]")
        mine = Path(given) / f"w-{store.session.host}-{os.getpid()}"
        mine.mkdir(parents=True, exist_ok=True)
        return mine, None
    if config.synthetic:
        return None, None
    parent = None
    if launcher == "slurm":
        parent = Path(config.out) / "scratch"
        parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="iotuner-scratch-", dir=parent))
    return tmp, tmp


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _print_outcome(console, store: Store, obj, outcome, summary, out: Path) -> None:
    n_base = len(store.default_runs)
    for note in outcome.notes:
        if note not in outcome.shown:
            console.print(f"[yellow]note:[/yellow] {note}")
    console.print(f"\n[bold]study {store.name}[/bold]: {summary['trials']} trials ({summary['trials_run']} run"
                  + (f", {summary['training_runs']} training runs" if summary["training_runs"] else "")
                  + f"), {results.fmt_time(summary['tuning_time_s'])} of tuning; stopped: {outcome.stopped_because}")
    console.print(f"default settings: {_fmt(outcome.default, obj)} (median of the default's {n_base} runs)")
    if outcome.winner and outcome.verdict:
        console.print(f"best: trial {outcome.winner['trial']}, {_fmt(outcome.winner['median'], obj)} against the "
                      f"default's {_fmt(outcome.confirmed_default, obj)} in the confirmation round: "
                      f"{outcome.verdict.describe()}")
    elif outcome.notes:
        console.print("best: the default settings")
    flat = settings.flatten(outcome.best_doc)
    console.print(f"best settings ({out / 'best.json'}):" + ("" if flat else " the default settings"))
    for k, v in flat.items():
        console.print(f"  {k} = {json.dumps(v)}")
    inert = outcome.best_doc.get("meta", {}).get("same_as_default")
    if inert:
        console.print(f"  [dim]left out, as they took effect as in the default: "
                      f"{', '.join(f'{k}={json.dumps(v)}' for k, v in inert.items())}[/dim]")
    r = summary["roti"]
    console.print(results.describe_roti(results.traj.Roti(r["unit"], (), r["peak"], r["peak_at_s"], r["final"]),
                                        summary.get("roti_reason")))
    k = summary.get("kernel")
    if k and k.get("speedup"):
        w = k["roti_without_kernel"]
        console.print(f"kernel: one evaluation {k['evaluation_s']['kernel']:.3g} s against "
                      f"{k['evaluation_s']['application']:.3g} s for the application ({k['speedup']:.1f}x); RoTI peak "
                      f"{_num(k['roti']['peak'])} with the kernel, {_num(w['peak'])} had the search run the "
                      f"application ({r['unit']})")
    v = summary["viability"]
    if v["runs"] is not None:
        console.print(f"viability: tuning pays for itself after {v['runs']} production run(s) ({v['reason']})")
    else:
        console.print(f"viability: none ({v['reason']})")
    life = summary.get("lifecycle")
    if life and life["planned_runs"]:
        saved = life["saved_at_planned_s"]
        console.print(f"lifecycle: over the {life['planned_runs']:,} planned production runs, tuning "
                      f"{'saves' if saved >= 0 else 'costs'} {results.fmt_time(abs(saved))} in all")
    console.print(f"results: {out}/ (best.json, trials.csv, curve.png, summary.json, report.html)")
