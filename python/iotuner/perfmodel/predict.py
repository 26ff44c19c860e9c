"""Predicted time of a run under a hint setting: the phases' counted operations priced by the calibration.

A rank's time in a phase is the sum of its operations' costs (collectives at the phase's rank count; a message
half an exchange round of its size, paid at each end; file writes at the number of ranks writing in the phase,
as a first write when the phase's file was new); the phase takes as long as its slowest rank (the collectives
of every round keep the ranks in step). Phases add up.

A study is judged by its objective, not by time: `Predictor` turns predicted phase times into the run's
totals (the baseline's measured phase times, each moved by what the model predicts the setting changes) and
scores them as the objective scores a run report.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Protocol, cast

from ..run_report import parse
from ..settings import complete
from .calibration import Calibration
from .count import phase_ops
from .ops import Ops
from .pattern import Pattern, from_access, from_hdf5_counters
from .romio_hints import Hints

COLLECTIVES = ("allgather", "alltoall", "allreduce", "bcast")
TRANSFER = "hdf5.transfer_mode"
MIB = 1 << 20


class Objective(Protocol):
    """What the model needs of a study's objective (`iotuner.tune.objective.Objective`): its score of a run's
    totals (a ValueError when they do not give it), which way is better, and its name and unit."""

    name: str
    unit: str

    def of_totals(self, t: dict) -> float: ...
    def key(self, value: float) -> float: ...


def ops_time(ops: Ops, cal: Calibration, new_file: bool) -> float:
    nprocs = len(ops.own)
    ranks = ops.ranks
    writers = max(1, sum(1 for c in ranks if any(o == "pwrite" for o, _ in c)))
    readers = max(1, sum(1 for c in ranks if any(o == "pread" for o, _ in c)))
    cache: dict = {}

    def cost(op, b):
        key = (op, b)
        if key not in cache:
            if op in COLLECTIVES:
                cache[key] = cal.cost(op, b, nprocs=nprocs)
            elif op in ("isend", "irecv"):
                cache[key] = cal.cost("p2p", b, nprocs=min(2, nprocs)) / 2
            elif op == "pwrite":
                cache[key] = cal.cost("pwrite", b, writers=writers, first=new_file)
            elif op == "pread":
                cache[key] = cal.cost("pread", b, writers=readers)
            else:  # waitall and the rest: inside the exchanges they complete
                cache[key] = 0.0
        return cache[key]

    return max((sum(n * cost(op, b) for (op, b), n in c.items()) for c in ranks), default=0.0)


@dataclass
class PhaseModel:
    """What the model needs of one measured phase: its pattern per direction, the hints it ran with."""

    index: int
    patterns: list[Pattern]
    hints: dict  # the MPI-IO hints read back from the run
    new_file: bool
    independent: bool = False  # HDF5's independent transfers: collective calls only when a point asks for them
    lustre: bool = False  # the file was on ROMIO's Lustre driver: its collective writes are counted as it makes them
    hdf5: bool = False  # an HDF5 phase: its independent transfers are one MPI-IO call per contiguous piece
    _times: dict = field(default_factory=dict, repr=False)  # (pattern, hints) -> seconds under _cal
    _cal: Calibration | None = field(default=None, repr=False)

    def time(self, cal: Calibration, override: dict, memo: dict | None = None, transfer: str | None = None) -> float:
        """Predicted seconds under these hints (transfer: the point's HDF5 transfer mode, when it sets one).
        memo: counted calls shared across phases and settings (count.phase_ops); the phase remembers its own
        times per effective hints."""
        if cal is not self._cal:
            self._times, self._cal = {}, cal
        merged = {**self.hints, **override}
        if self.independent and transfer != "collective":
            merged.update(romio_cb_write="disable", romio_cb_read="disable")
        if self.hdf5 and (transfer == "independent" or (self.independent and transfer != "collective")):
            # HDF5 (1.10) writes an independent transfer's noncontiguous selection as one MPI-IO call per
            # contiguous piece (kernels/README.md, bandio): no datatype reaches ROMIO, so no sieve joins them
            merged.update(romio_ds_write="disable", romio_ds_read="disable")
        total, size = 0.0, 0
        for j, pat in enumerate(self.patterns):
            h = Hints.from_mapping(merged, pat.nprocs, lustre=self.lustre).for_direction(pat.direction)
            end = max([0] + [hi for _, hi, shape in pat.shapes() if shape is not None])
            writing = pat.direction == "write"
            key = (j, h)
            if key not in self._times:
                start = (0 if self.new_file else end) if writing else max(size, end)  # reads find their data
                ops = phase_ops(pat, h, start, memo=memo)
                self._times[key] = ops_time(ops, cal, self.new_file and writing)
            total += self._times[key]
            size = max(size, end)
        return total


def phases_of(report: dict) -> list[PhaseModel]:
    """The modelled phases of a run report: those with collective MPI-IO calls (their access section), and a
    shared HDF5 file's independent transfers as the collective calls they would be (from its counters:
    pattern.from_hdf5_counters)."""
    rep = parse(report)
    out = []
    for i, ph in enumerate(rep.phases):
        acc = rep.access(i)
        pats = [p for p in (from_access(acc, d) for d in ("write", "read")) if p is not None]
        independent = not pats
        if independent:
            pats = [p for p in (from_hdf5_counters(ph, d) for d in ("write", "read")) if p is not None]
        if pats:
            hints, lustre = dict(ph.get("mpi_hints") or {}), ph.get("mpiio_driver") == "lustre"
            hdf5 = ph.get("kind") == "hdf5"
            out.append(PhaseModel(i, pats, hints, bool(ph.get("created")), independent, lustre, hdf5))
    return out


def hint_overrides(flat: dict, nodes: int = 1) -> dict:
    """A point's MPI-IO hints ({"mpiio.knob": value} settings, with the knobs they require) as hint strings.
    HDF5's independent transfers reach ROMIO as independent calls: the path the model counts for collective
    calls with collective buffering disabled."""
    out = {}
    for key, value in complete(flat, nodes).items():
        layer, _, knob = key.partition(".")
        if layer == "mpiio":
            out[knob] = str(value)
    if flat.get(TRANSFER) == "independent":
        out["romio_cb_write"] = out["romio_cb_read"] = "disable"
    return out


def nothing_to_predict(report: dict | None, phases: int | None) -> str | None:
    """Why the model cannot rank anything (None: it can)."""
    if report is None:
        return (
            "the default's runs wrote no run report (the application ran without libiotuner, or its MPI "
            "is not one iotuner was built for), so there is no access pattern to predict from"
        )
    if (report.get("run") or {}).get("mpi_io_component") == "ompio":
        return (
            "the default's run used Open MPI's OMPIO, whose collective I/O is not ROMIO's that the model "
            "counts (Open MPI's io component romio321 is)"
        )
    if not phases:
        return (
            "the default's run made neither a collective MPI-IO call nor HDF5 independent transfers to a shared "
            "file, so there is no access pattern to predict from"
        )
    return None


def modelled(space) -> list[str]:
    """The dimensions of a search space (tune.space.SearchSpace) the model predicts: every knob an MPI-IO hint,
    or HDF5's transfer mode."""
    return [d.name for d in space.dimensions if all(k.startswith("mpiio.") or k == TRANSFER for k in d.knobs())]


class Predictor:
    """A run under other hints, predicted from the baseline's run report: each modelled phase's measured wall
    time moved by the predicted change (what the model does not see, such as HDF5's metadata or the
    application's work inside the phase, stays as measured; a model that predicts more than was measured
    scales instead), the other phases as measured, and the totals scored by the study's objective."""

    def __init__(self, report: dict, cal: Calibration, objective: Objective | None):
        self.rep, self.cal, self.objective = parse(report), cal, objective
        self.phases = phases_of(report)
        self.memo: dict = {}
        self.base = {ph.index: ph.time(cal, {}, self.memo) for ph in self.phases}
        self.scores: dict = {}  # hint overrides -> (objective value or None, predicted I/O seconds)
        try:
            self.by_objective = objective is not None and objective.of_totals(self.rep.totals) is not None
            self.why = None
        except ValueError as e:  # the objective's ObjectiveError: the totals do not give it
            self.by_objective, self.why = False, str(e)

    def wall(self, ph: PhaseModel, override: dict, transfer: str | None = None) -> float:
        measured = float(self.rep.phases[ph.index].get("wall_time_s") or 0.0)
        base, now = self.base[ph.index], ph.time(self.cal, override, self.memo, transfer)
        if measured >= base:
            return now + (measured - base)
        return now * measured / base if base > 0 else now

    def totals(self, override: dict, transfer: str | None = None) -> dict:
        """The run's predicted totals, named as a run report's (transfer: the point's HDF5 transfer mode)."""
        t = self.rep.totals
        tw, tr = float(t["write_time_s"]), float(t["read_time_s"])
        for ph in self.phases:
            p = self.rep.phases[ph.index]
            w, r = p["bytes_written"], p["bytes_read"]
            if w + r == 0:
                continue
            delta = self.wall(ph, override, transfer) - float(p.get("wall_time_s") or 0.0)
            tw += delta * w / (w + r)
            tr += delta * r / (w + r)
        tw, tr = max(tw, 0.0), max(tr, 0.0)
        bw, br = t["bytes_written"], t["bytes_read"]
        return {
            "bytes_written": bw,
            "bytes_read": br,
            "write_time_s": tw,
            "read_time_s": tr,
            "write_bandwidth_mib_s": bw / MIB / tw if tw > 0 else 0.0,
            "read_bandwidth_mib_s": br / MIB / tr if tr > 0 else 0.0,
        }

    def score(self, override: dict, transfer: str | None = None) -> tuple[float | None, float]:
        """(the predicted objective, or None when it cannot be predicted; the predicted I/O seconds) under
        these hints and the point's HDF5 transfer mode (None: as run)."""
        key = (tuple(sorted(override.items())), transfer)
        if key not in self.scores:
            t = self.totals(override, transfer)
            self.scores[key] = (
                cast(Objective, self.objective).of_totals(t) if self.by_objective else None,
                t["write_time_s"] + t["read_time_s"],
            )
        return self.scores[key]

    def sort_key(self, score: tuple[float | None, float]) -> tuple[float, float]:
        """Best first: the objective (higher is better after objective.key), then less I/O time."""
        value, seconds = score
        return (-cast(Objective, self.objective).key(value) if value is not None else 0.0, seconds)


def rank_points(
    space,
    predictor: Predictor,
    fixed: dict[str, str],
    nodes: int = 1,
    default: dict[str, str] | None = None,
) -> list[tuple[tuple[float | None, float], dict[str, str]]]:
    """Every point of the modelled dimensions (the others held at `fixed`), with its predicted score, best
    first. Among equal predictions:
    - the point that leaves fewer hints to ROMIO's `automatic` first: the model decided what `automatic` does
      for the default's access pattern, and a pinned hint keeps that behaviour when a knob the model does not
      see (HDF5's chunking) changes the pattern, where `automatic` would decide anew;
    - then the point with fewer changes from `default` (HDF5's independent transfers and collective ones with
      collective buffering disabled are one path to the model, not to the application)."""
    dims = [space.dimension(n) for n in modelled(space)]
    default = default or {}
    out = []
    for labels in itertools.product(*(d.labels for d in dims)):
        point = {**fixed, **dict(zip((d.name for d in dims), labels))}
        flat = space.point_settings(space.decode(point))
        changes = sum(1 for d, v in zip(dims, labels) if d.name in default and default[d.name] != v)
        hints = hint_overrides(flat, nodes)
        unpinned = sum(1 for v in hints.values() if v == "automatic")
        out.append((predictor.score(hints, flat.get(TRANSFER)), (unpinned, changes), point))
    out.sort(key=lambda x: (predictor.sort_key(x[0]), x[1]))
    return [(score, point) for score, _, point in out]


def differs(a: tuple, b: tuple) -> bool:
    """Two predicted scores that tell different behaviours apart (beyond a rounding of a thousandth)."""
    (va, ta), (vb, tb) = a, b
    if va is not None and vb is not None and abs(va - vb) > 1e-3 * max(abs(va), abs(vb), 1e-12):
        return True
    return abs(ta - tb) > 1e-3 * max(ta, tb, 1e-12)


def describe(score: tuple, objective) -> str:
    value, seconds = score
    io = f"{seconds * 1e3:.1f} ms of I/O"
    if value is None:
        return io
    return f"{value:,.1f} {objective.unit} ({io})" if objective.unit != "s" else io
