"""`iotuner tune`: build a study from the command line (or resume one), run it,
show progress and the outcome."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.text import Text

from .. import mpiabi, render, settings
from . import (
    launch,
    printout,
    progress,
    replay,
    results,
    simulated,
    strategies,
    synthetic,
)
from . import (
    objective as objectives,
)
from . import (
    space as spaces,
)
from .arguments import parse_duration
from .evaluate import JobEvaluator, KernelEvaluator
from .launch.local import default_mpiexec
from .store import Store, StudyError
from .study import leases, urls
from .study.storage import StudyStorage
from .study_config import Budget, ConfigError, ObjectiveSpec, ReplaySpec, SlurmSpec, StudyConfig, SyntheticSpec
from .tune_error import TuneError
from .tuner import Tuner


def _config_from_args(args: argparse.Namespace, out: Path) -> tuple[StudyConfig, Budget]:
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    confirm_app: list[str] = []
    if args.kernel:
        from .. import kernel as kernels

        k = kernels.load(args.kernel)  # KernelError is a ValueError: reported as bad input
        confirm_app = list(command) or k.app_command()
        command = k.command()
        if not k.usable:
            print(
                f"iotuner tune: the kernel in {args.kernel} is not used ({k.reason}); the trials run the application",
                file=sys.stderr,
            )
    if args.replay and args.synthetic:
        raise ValueError("give --synthetic MODEL or --replay FILE, not both")
    recording = (
        replay.for_study(args.replay, args.space, settings.load(args.baseline) if args.baseline else None)
        if args.replay
        else None
    )
    space_spec = args.space or ("tunio" if args.synthetic == "lustre" else "romio")
    space = recording.space if recording else spaces.load(space_spec)
    obj = objectives.parse(args.objective, args.direction)
    options = {}
    for item in args.strategy_option:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise SystemExit(f"iotuner tune: --strategy-option {item!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    options.update(strategies.options_from(args.strategy, args))  # its own flags; another strategy's fail here
    strategies.make(args.strategy, space, args.seed, options)  # an unknown strategy or bad options fail here
    strategies.check_stopper(args.stop)
    baseline = recording.baseline if recording else settings.load(args.baseline) if args.baseline else {"version": 1}
    trials = args.trials if args.trials is not None else (None if args.time or args.runs else 30)
    mpiexec = args.mpiexec or default_mpiexec()
    offline = args.synthetic or args.replay or args.simulate
    if args.launcher == "local" and not offline:
        launch.local.LocalMPI(args.ranks, mpiexec)  # a launcher not on the PATH: one line, before the study exists
    if args.launcher == "local" and not offline and (own := launch.local.own_launcher(command)):
        raise ValueError(
            f"the command starts with its own launcher ({own}), and tune starts it with "
            f"{launch.local.LocalMPI(args.ranks, mpiexec).describe()}: every run would start {args.ranks} copies of "
            f"{own}; give the program alone (--ranks N -- ./app ...), or --launcher none to run the command as given"
        )
    if args.launcher == "local" and (found := mpiabi.mismatch([*launch.local.launcher_argv(mpiexec), *command])):
        raise ValueError(mpiabi.mismatch_message(found, "give --mpiexec {launcher}"))
    config = StudyConfig(
        space=space.to_json(),
        strategy=args.strategy,
        strategy_options=options,
        seed=args.seed,
        baseline=baseline,
        objective=ObjectiveSpec(
            obj.name,
            obj.direction,
            obj.unit,
            obj.pattern,
            args.objective_clock or ("calls" if args.kernel else "phase"),
        ),
        repeats=args.repeats,
        baseline_every=args.baseline_every,
        confirm_top=args.confirm_top,
        confirm_rounds=args.confirm_rounds,
        app=tuple(command),
        launcher=args.launcher,
        ranks=args.ranks,
        confirm_app=tuple(confirm_app) if confirm_app != list(command) else (),
        kernel=str(Path(args.kernel).resolve()) if args.kernel else None,
        mpiexec=mpiexec,
        nodes=args.nodes,
        scratch=args.scratch,
        timeout_s=parse_duration(args.timeout),
        keep=args.keep,
        drop_caches=args.drop_caches,
        synthetic=SyntheticSpec(args.synthetic, args.synthetic_noise, args.synthetic_delay) if args.synthetic else None,
        replay=ReplaySpec(str(recording.path), recording.sha256) if recording else None,
        simulate=simulated.spec(args.simulate, args.simulate_report) if args.simulate else None,
        slurm=_slurm_spec(args) if args.launcher == "slurm" else None,
        production_runtime_s=parse_duration(args.production_runtime) if args.production_runtime else None,
        production_runs=args.production_runs,
        stop=args.stop or ("production-runs" if args.production_runs else None),
        out=str(out),
    )
    return config, Budget(trials, parse_duration(args.time) if args.time else None, args.runs)


def _slurm_spec(args: argparse.Namespace) -> SlurmSpec:
    return SlurmSpec(
        nodes=args.nodes,
        tasks_per_node=args.tasks_per_node,
        partition=args.partition,
        account=args.account,
        time_limit=args.time_limit,
        sbatch_args=tuple(args.sbatch_arg),
        mpi=args.srun_mpi,
    )


def _objective(config: StudyConfig) -> objectives.Objective:
    return objectives.of_spec(config.objective)


def _evaluator(config: StudyConfig, obj: objectives.Objective, scratch: Path | None, launcher: str, study: str):
    if config.replay:
        return replay.ReplayEvaluator(replay.for_config(config.replay), obj, config.seed)
    syn = config.synthetic
    if syn:
        return synthetic.SyntheticEvaluator(synthetic.model(syn.model), obj, syn.noise, syn.delay, config.seed)
    if config.simulate:
        return simulated.SimulatedEvaluator(config.simulate, obj, config.ranks, config.nodes, config.seed)
    how = launch.make(launcher, config.ranks, config.mpiexec, config.slurm, label=f"iotuner-{study}")
    trials = JobEvaluator(config.app, how, obj, scratch, config.timeout_s, config.keep, config.drop_caches)
    if not config.confirm_app:
        return trials
    app = JobEvaluator(config.confirm_app, how, obj, scratch, config.timeout_s, config.keep, config.drop_caches)
    return KernelEvaluator(trials, app)


def _fmt(value: float | None, obj: objectives.Objective) -> str:
    return printout.fmt_value(value, obj.unit)


print_note = progress.note


def storage_url(given: str | None, default: str | None = None, what: str = "--storage") -> str:
    """The study storage URL: given, else $IOTUNER_STORAGE, else the default. An empty one is an error, not
    the default: a script that builds the URL from an unset variable must not quietly tune elsewhere."""
    url = given if given is not None else os.environ.get(urls.ENV) or default
    if url is None or not url.strip():
        raise ValueError(
            f"{what} is empty: give the study storage as an SQLAlchemy URL"
            + ("" if given is not None else f" (--storage or ${urls.ENV})")
        )
    urls.guard_output(url)  # from here on, no line this process prints shows its password
    return url


def study_name(args: argparse.Namespace) -> str:
    """--study, else a name from what is tuned (h5ior for `-- h5ior ...`, synthetic-ufs), so that tuning two
    programs in one directory makes two studies (iotuner-h5ior/, iotuner-vpicio/); a --resume without a
    program resumes the one study it finds."""
    if args.study:
        return args.study
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if args.synthetic:
        name = f"synthetic-{args.synthetic}"
    elif args.replay:
        name = f"replay-{Path(args.replay).stem}"
    elif args.kernel:
        name = f"kernel-{Path(args.kernel).resolve().name}"
    elif command:
        name = Path(command[0]).name
    elif args.resume:
        return _only_study(args)
    else:
        name = "iotuner"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "iotuner"
    return name


def _only_study(args: argparse.Namespace) -> str:
    """The study to resume when none is named: the only one in --out, or in the iotuner-* directories here."""
    if args.out or args.storage or os.environ.get(urls.ENV):
        where = "its storage"
        dirs = [Path(args.out)] if args.out and not (args.storage or os.environ.get(urls.ENV)) else []
    else:
        where = "this directory"
        dirs = sorted(p for p in Path.cwd().glob("iotuner-*") if (p / "study.db").is_file())
    names = []
    for d in dirs:
        if (d / "study.db").is_file():
            names += sorted(
                n for n in study_names_in(f"sqlite:///{(d / 'study.db').resolve()}") if not n.endswith(".iotuner")
            )
    if len(names) == 1:
        return names[0]
    found = f" (studies: {', '.join(names)})" if names else ""
    raise ValueError(f"--resume: give --study NAME, the study to resume{found} in {where}")


def study_names_in(url: str) -> set[str]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return set(optuna.get_all_study_names(url))


def _open(args: argparse.Namespace, console: Console) -> tuple[Store, Path, str]:
    args.study = study_name(args)
    out = Path(args.out or f"iotuner-{args.study}").resolve()
    storage = storage_url(args.storage, f"sqlite:///{out / 'study.db'}")
    if args.resume:
        store = Store.open(storage, args.study, heartbeat_s=args.heartbeat)
        if args.trials is not None or args.time or args.runs is not None:  # new totals for the study, kept in it
            b = store.budget
            store.set_budget(
                Budget(
                    args.trials if args.trials is not None else b.trials,
                    parse_duration(args.time) if args.time else b.seconds,
                    args.runs if args.runs is not None else b.runs,
                )
            )
        out = Path(store.config.out)
        console.print(
            f"resuming study [bold]{args.study}[/bold]: {len(store.trials.completed())} completed trials, "
            f"{len(store.results.default_runs)} runs of the default, {results.fmt_time(store.workers.clock())} of "
            f"tuning so far"
        )
    else:
        config, budget = _config_from_args(args, out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StudyError(f"cannot create the output directory {out}: {e.strerror}") from None
        if _nothing_measured(storage, args.study):
            StudyStorage.delete(storage, args.study)
            console.print(
                f"study [bold]{args.study}[/bold] measured nothing (its last start ended before any run "
                f"succeeded, and none of its workers is alive): starting it again with this command"
            )
        store = Store.create(storage, args.study, config, budget, heartbeat_s=args.heartbeat)
    return store, out, storage


# A study younger than this may be one another process has just created and not yet started working on.
_FRESH_S = 60.0


def _nothing_measured(storage: str, name: str) -> bool:
    """Whether the study exists with no successful run of any kind (the default's included) and no worker that is
    alive or may be (another host's): a first `tune` that failed at its baseline, which a corrected command
    replaces, where --resume would run the failing command again."""
    try:
        old = Store.open(storage, name, heartbeat_s=None)
    except StudyError:
        return False  # none, or not ours: Store.create says why
    old.refresh()
    if old.results.default_runs or old.trials.completed():
        return False
    sessions = old.workers.sessions()
    if any(leases.alive(s.host, s.pid) is not False for s in sessions):
        return False
    created = old.config.created
    if not sessions:
        try:
            age = time.time() - dt.datetime.fromisoformat(created).timestamp() if created else 0.0
        except ValueError:
            return False
        return age > _FRESH_S
    return True


def _label_and_word(console: Console, label: str, word: str) -> None:
    """label and a word to copy (a URL, a path) on one line when they fit, else the word whole on its own line."""
    if len(label) + 1 + len(word) <= console.width:
        console.print(Text(f"{label} {word}"), soft_wrap=True)
    else:
        console.print(Text(label), soft_wrap=True)
        console.print(Text(f"    {word}"), soft_wrap=True)


def run(args: argparse.Namespace) -> int:
    """iotuner tune: create (or resume) the study, work on it with --workers workers, write the results."""
    console = render.console_for_output()
    try:
        if args.workers < 0:
            raise ValueError("--workers must be 0 or more")
        if args.submit and args.launcher != "slurm" and not args.resume:
            raise ValueError("--submit needs --launcher slurm")
        store, out, storage = _open(args, console)
    except (
        ValueError,
        StudyError,
        ConfigError,
        spaces.SpaceError,
        settings.SettingsError,
        objectives.ObjectiveError,
        launch.LaunchError,
        KeyError,
    ) as e:
        print(f"iotuner tune: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    if args.workers == 0:
        from . import workers

        command = workers.worker_command(store.name, args.heartbeat)[3:]  # after python -m iotuner
        console.print(
            f"study [bold]{store.name}[/bold] is ready in {urls.mask(storage)}; start workers with\n  "
            f"iotuner {workers.slurm.quote_all(command)} --storage {urls.mask(storage)}\n(or with the URL "
            f"in ${urls.ENV}, or in a file only you can read given by --storage-file)\nand write "
            f"its results at the end with\n  {urls.resume_hint(store.name, storage)}"
        )
        return 0
    if args.submit:
        from . import workers

        return workers.submit(
            store,
            storage,
            out,
            args.workers,
            args.heartbeat,
            console,
            lambda outcome: _finish(store, outcome, out, console, storage, explicit=True),
        )
    extra = None
    if args.workers > 1:
        from . import workers

        extra = workers.spawn_local(store.name, storage, out, args.workers - 1, args.heartbeat)
        console.print(f"{args.workers} workers: this one, and {args.workers - 1} more logging to {out}/worker-*.log")
    try:
        outcome = _work(
            store,
            console,
            storage,
            launcher=store.config.launcher,
            scratch=None,
            eval_log=args.eval_log,
            verbosity=progress.QUIET if args.quiet else progress.VERBOSE if args.verbose else progress.NORMAL,
        )
    finally:
        if extra is not None:
            extra.wait()
    if isinstance(outcome, int):
        return outcome
    return _finish(store, outcome, out, console, storage, explicit=args.resume)


def worker(args: argparse.Namespace) -> int:
    """iotuner worker: one more worker on an existing study."""
    console = render.console_for_output()
    try:
        storage = urls.read_private(args.storage_file) if args.storage_file else storage_url(args.storage)
        urls.guard_output(storage)
        store = Store.open(storage, args.study, heartbeat_s=args.heartbeat)
    except (StudyError, ValueError) as e:
        print(f"iotuner worker: {e}", file=sys.stderr)
        return 2
    out = Path(args.out or store.config.out)
    console.print(f"worker on study [bold]{args.study}[/bold] ({store.trials.trials_run()} trials run so far)")
    outcome = _work(
        store,
        console,
        storage,
        launcher=args.launcher or store.config.launcher,
        scratch=args.scratch,
        eval_log=args.eval_log,
    )
    if isinstance(outcome, int):
        return outcome
    return _finish(store, outcome, out, console, storage)


def _work(
    store: Store,
    console: Console,
    storage: str,
    *,
    launcher: str,
    scratch: str | None,
    eval_log: str | None,
    verbosity: int = progress.NORMAL,
):
    """This process's worker loop on the study: its Outcome, or an exit status."""
    config = store.config
    obj = _objective(config)
    space = spaces.from_json(config.space)
    scratch_dir, scratch_tmp = _scratch(config, store, console, scratch, launcher)
    try:
        evaluator = _evaluator(config, obj, scratch_dir, launcher, store.name)
        strategy = strategies.make(
            config.strategy, space, store.workers.worker_seed(config.seed), config.strategy_options
        )
    except (launch.LaunchError, KeyError, ValueError) as e:  # ReplayError is a ValueError
        print(f"iotuner tune: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    what = (
        f"synthetic model '{config.synthetic.model}'"
        if config.synthetic
        else f"recorded sweep {config.replay.path}"
        if config.replay
        else evaluator.describe()
        if config.simulate
        else f"{evaluator.launcher.describe()} {shlex.join(config.app)}"
    )
    printer = progress.Printer(console, obj, config.baseline, verbosity)
    tuner = Tuner(store, evaluator, space, obj, strategy, printer, Path(eval_log) if eval_log else None)
    # the command on a line of its own, never wrapped by the printer: it can be copied as it is
    console.print(Text.assemble("tuning ", (what, "bold")), soft_wrap=True)
    if config.confirm_app:
        console.print(
            Text(f"  the confirmation round runs the application: {shlex.join(config.confirm_app)}"), soft_wrap=True
        )
    _label_and_word(console, f"  study {store.name} in", urls.mask(storage))

    def header(t: Tuner) -> None:  # once the default's runs say which layers the program uses
        training = t.strategy.training_runs(config.repeats)
        made = store.trials.application_runs()["training"]
        console.print(render.indented(f"space {_describe_space(space, t)}, strategy {config.strategy}", 2))
        console.print(
            render.indented(
                f"objective {obj.name}, {config.repeats} run(s) per trial, budget {store.budget.describe()}", 2
            )
        )
        if training:
            console.print(
                render.indented(
                    f"this strategy will make {training} training runs before its first trial"
                    + (f" ({made} made already)" if made else ""),
                    2,
                )
            )

    tuner.on_start = header
    try:
        outcome = tuner.run(str(scratch_tmp) if scratch_tmp else None)
    except TuneError as e:
        print(f"iotuner tune: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        console.print(
            f"\ninterrupted: completed trials are saved; continue with {urls.resume_hint(store.name, storage)}"
        )
        return 130
    except Exception as e:  # the study database failed under us (a lost connection, a full disk)
        why = storage_failure(e)
        if why is None:
            raise
        print(
            f"iotuner tune: the study storage failed: {why}; completed runs are saved, continue with "
            f"{urls.resume_hint(store.name, storage)} once it is back",
            file=sys.stderr,
        )
        return 1
    finally:
        with contextlib.suppress(Exception):  # the study storage may be what failed
            remove_left_scratch(store, console, scratch or config.scratch)
        if scratch_tmp:
            shutil.rmtree(scratch_tmp, ignore_errors=True)
        elif scratch_dir is not None and scratch_dir.name.startswith("w-"):
            with contextlib.suppress(OSError):
                scratch_dir.rmdir()  # this worker's directory in a given --scratch, when its runs left nothing
    outcome.notes.extend(n for n in getattr(evaluator, "notes", []) if n not in outcome.notes)
    outcome.shown = printer.shown  # notes already printed while tuning
    return outcome


def _describe_space(whole: spaces.SearchSpace, tuner: Tuner) -> str:
    """The space searched: its name and size, and the dimensions left out for layers the program never used."""
    if not tuner.search.dropped:
        return f"{whole.name} ({len(whole.dimensions)} dimensions, {whole.size():,} points)"
    searched = tuner.space
    layers = sorted({k.partition(".")[0] for n in tuner.search.dropped for k in whole.dimension(n).knobs()})
    why = "; ".join(
        f"{spaces.LAYER_NAMES.get(layer, layer)} not used ({tuner.search.unused[layer]})" for layer in layers
    )
    return (
        f"{whole.name} ({len(searched.dimensions)} of its {len(whole.dimensions)} dimensions, "
        f"{searched.size():,} of {whole.size():,} points; dropped {', '.join(tuner.search.dropped)}: the default's run "
        f"report shows {why})"
    )


def storage_failure(e: BaseException) -> str | None:
    """What went wrong, when an exception is the study database's (None: it is not)."""
    import optuna
    import sqlalchemy

    if not isinstance(e, (optuna.exceptions.StorageInternalError, sqlalchemy.exc.SQLAlchemyError)):
        return None
    from .study.storage import db_error

    return db_error(e)  # the driver's own first line, not the statement


def _finish(store: Store, outcome, out: Path, console: Console, storage: str, explicit: bool = False) -> int:
    """The study's results: written once, by the process that ran the confirmation round (or, when they were
    never written, by an explicit `iotuner tune --resume`); every process prints the round's verdict."""
    store.refresh()
    lease = outcome.round
    if lease is not None and not outcome.ran_round and not (explicit and _unwritten(lease)):
        _print_verdict(console, outcome, lease, out, store.config.objective.unit)
        return 0
    total = store.workers.tuning_time()
    try:
        summary = results.write_all(store, _objective(store.config), outcome, out, total)
    except OSError as e:
        print(
            f"iotuner tune: the study is complete and saved in {urls.mask(storage)}, but its results cannot be "
            f"written to {out}: {e.strerror}. Free space or give another --out, then run "
            f"{urls.resume_hint(store.name, storage)} to write them",
            file=sys.stderr,
        )
        return 1
    if lease is not None:
        with contextlib.suppress(Exception):  # only a later --resume would write them again
            store.workers.mark_written(lease, str(out))
    _print_outcome(console, outcome, summary, out)
    console.print(f"wrote the results of study {store.name} to {out}/")
    try:  # the page to share: curve, verdict, RoTI, importance, every run
        from .. import htmlreport

        htmlreport.write(htmlreport.render_study(out), out / "report.html")
        console.print(f"report: {out / 'report.html'}")
    except (OSError, ValueError) as e:
        print_note(console, f"no HTML report: {e}")
    return 0


def _unwritten(lease) -> bool:
    """The round's results were never written, and the worker that ran it is gone (or it would write them)."""
    from .study.leases import alive

    if lease.content.get("written"):
        return False
    here = alive(lease.host, lease.pid)
    return here is False or (here is None and time.time() - lease.beat > lease.grace)


def _print_verdict(console: Console, outcome, lease, out: Path, unit: str | None) -> None:
    """What a worker that did not run the confirmation round prints: the round's verdict, the same line as
    the worker that ran it, and where the results are."""
    for note in outcome.notes:
        if note not in outcome.shown:
            print_note(console, note)
    console.print(f"\nthe confirmation round ran on {lease.host} (process {lease.pid}); its verdict:")
    console.print(
        printout.best_line(
            outcome.winner,
            asdict(outcome.verdict) if outcome.verdict else None,
            outcome.confirmed_default,
            unit,
            outcome.notes,
        )
    )
    where = "written by that worker" if lease.content.get("written") else "written by the worker that ran the round"
    console.print(f"results: {out}/ ({where})")


def remove_left_scratch(store: Store, console: Console, given: str | None) -> None:
    """Removes the scratch of tuners and workers of this host that were killed (their runs' files): at a
    session's start, and at its end, since a worker killed mid-trial while the others went on would leave it
    after the study ended."""
    for dead in store.workers.dead_sessions_here():
        if dead.scratch and Path(dead.scratch).name.startswith("iotuner-scratch-") and Path(dead.scratch).exists():
            shutil.rmtree(dead.scratch, ignore_errors=True)
            console.print(f"[dim]removed {dead.scratch}, left by a stopped tuner[/dim]")
    if given and Path(given).is_dir():
        for left in Path(given).glob(f"w-{store.workers.session.host}-*"):
            pid = left.name.rsplit("-", 1)[1]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(left, ignore_errors=True)
                console.print(f"[dim]removed {left}, left by a stopped worker[/dim]")


def _scratch(
    config: StudyConfig, store: Store, console: Console, scratch: str | None, launcher: str
) -> tuple[Path | None, Path | None]:
    """(where runs write, the temporary directory to remove at the end). Without --scratch, a temporary
    directory per session (OUT/scratch/SESSION for Slurm jobs, which compute nodes must see); one a killed
    tuner left on this host is removed now."""
    given = scratch or config.scratch
    remove_left_scratch(store, console, given)
    if given:
        # each worker in a directory of its own: run labels are per worker, the directory may be shared
        mine = Path(given) / f"w-{store.workers.session.host}-{os.getpid()}"
        try:
            mine.mkdir(parents=True, exist_ok=True)
        except OSError as e:  # a read-only file system, a file in its place: one line, no run started
            from ..files import OutputError

            raise OutputError(
                f"--scratch {given}: cannot make the runs' directory {mine} ({e.strerror or e})"
            ) from None
        return mine, None
    if config.offline:
        return None, None
    parent = None
    if launcher == "slurm":
        parent = Path(config.out) / "scratch"
        parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="iotuner-scratch-", dir=parent))
    return tmp, tmp


def _print_outcome(console, outcome, summary, out: Path) -> None:
    for note in outcome.notes:
        if note not in outcome.shown:
            print_note(console, note)
    printout.print_outcome(console, summary, outcome.best_doc, out)
