"""Recorded sweeps and the replay objective.

A recording (written by bench/sweep.py) holds, for every point of a search
space, every measured run of a real application: its write and read phase
times. The replay objective answers a point by drawing one of the point's
recorded runs, so strategies can be compared on real, noisy measurements
with many seeds in seconds (`iotuner tune --replay FILE`).

The file is JSON (gzip-compressed when its name ends in .gz):

    {"format": "iotuner-sweep", "version": 1,
     "space": {...},                  # the space, as SearchSpace.to_json
     "baseline": {...},               # the settings document every run had under its point
     "command": [...], "nodes": 1,    # the application and how many nodes it spanned
     "bytes": {"written": W, "read": R},   # what every run moved
     "default": {"runs": [[write_s, read_s, others], ...], "effective": {...}},
     "points": [{"values": [v1, v2, ...],      # one per dimension, in the space's order
                 "runs": [[write_s, read_s, others], ...],
                 "failures": 0, "error": null,
                 "effective": {...}}, ...],    # what took effect unlike the default (first run)
     "meta": {...},                   # machine, dates, the sweep's command and schedule
     "report": {...},                 # optional: a run report of the default settings (its access pattern)
     "calibration": {...}}            # optional: `iotuner calibrate`'s file of the machine it was recorded on

Points are listed in the order of the product of the dimensions' values.
A run's optional third number is the CPU time other processes used while it
ran, in cores (0 to the machine's cores): how loaded the machine was.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import math
import os
import random
import statistics
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import native, settings
from ..perfmodel.calibration import Calibration
from ..settings import as_text, complete
from .evaluate import Measurement, OfflineEvaluator
from .objective import Objective, ObjectiveError
from .space import SearchSpace, SpaceError, from_json
from .space import load as load_space

FORMAT, VERSION = "iotuner-sweep", 1
Run = tuple[float, ...]  # (write phase seconds, read phase seconds[, other processes' CPU use in cores])


class ReplayError(ValueError):
    """A recording that cannot be read, or a question it cannot answer."""


def canonical(flat: Mapping[str, Any]) -> str:
    return json.dumps(dict(flat), sort_keys=True)


@dataclass
class RecordedPoint:
    values: tuple  # one per dimension ((): the default settings)
    runs: list[Run] = field(default_factory=list)
    failures: int = 0
    error: str | None = None  # the last failure's message
    effective: dict[str, str] | None = None  # what took effect unlike the default; None: not known yet

    def to_json(self) -> dict:
        out: dict[str, Any] = {"runs": [[_round(x) for x in run] for run in self.runs]}
        if self.values:
            out = {"values": list(self.values), **out}
        if self.failures:
            out["failures"], out["error"] = self.failures, self.error
        if self.effective is not None:
            out["effective"] = self.effective
        return out


def _round(x: float) -> float:
    return float(f"{x:.5g}")


@dataclass
class Recording:
    space: SearchSpace
    baseline: dict
    command: list[str]
    nodes: int
    default: RecordedPoint
    points: list[RecordedPoint]
    bytes_written: int | None = None
    bytes_read: int | None = None
    meta: dict = field(default_factory=dict)
    report: dict | None = None  # a run report of the default settings: what strategies that model the run read
    calibration: dict | None = None  # the calibration (`iotuner calibrate`) of the machine it was recorded on
    path: Path | None = None  # where it was loaded from
    sha256: str = ""  # of the file as loaded
    _index: dict[str, RecordedPoint] | None = field(default=None, repr=False)

    # ---- building and saving

    @classmethod
    def new(
        cls, space: SearchSpace, baseline: dict, command: list[str], nodes: int = 1, meta: dict | None = None
    ) -> Recording:
        """An empty recording of every point of the space."""
        points = [RecordedPoint(tuple(v)) for v in itertools.product(*(d.values for d in space.dimensions))]
        return cls(
            space, settings.validate(baseline), list(command), nodes, RecordedPoint(()), points, meta=dict(meta or {})
        )

    def add_run(self, point: RecordedPoint, m: Measurement, run: Run | None) -> None:
        """Records one measurement of a point (or of the default): its run, or its failure."""
        if not m.ok or run is None:
            point.failures += 1
            point.error = (m.error or "failed")[-500:]
            return
        point.runs.append(run)
        if point.effective is None:
            eff = effective_of(m)
            if point is self.default:
                point.effective = eff
            else:
                ref = self.default.effective or {}
                point.effective = {k: v for k, v in eff.items() if ref.get(k) != v}

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "space": self.space.to_json(),
            "baseline": self.baseline,
            "command": self.command,
            "nodes": self.nodes,
            "bytes": {"written": self.bytes_written, "read": self.bytes_read},
            "default": self.default.to_json(),
            "points": [p.to_json() for p in self.points],
            "meta": self.meta,
            **({"report": self.report} if self.report is not None else {}),
            **({"calibration": self.calibration} if self.calibration is not None else {}),
        }

    def save(self, path: str | os.PathLike) -> None:
        """Writes atomically: a reader (or a killed sweep) never sees half a file."""
        path = Path(path)
        data = json.dumps(self.to_json(), separators=(",", ":")).encode()
        if path.name.endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)

    def runnable_command(self) -> list[str]:
        """The application's command, a bundled kernel's name (as recorded, so recordings carry no
        machine's paths) resolved to its executable here."""

        first = self.command[0]
        if "/" not in first and first in native.bundled_programs():
            first = str(native.executable(first))
        return [first, *self.command[1:]]

    # ---- looking up

    def flat_of(self, point: RecordedPoint) -> dict[str, Any]:
        """The settings a run of the point had: the baseline's, with the point's knobs on top."""
        flat = settings.flatten(self.baseline)
        if point.values:
            mine = complete(self.space.point_settings(self.point_of(point)), self.nodes)
            flat.update(settings.flatten(settings.from_flat(mine)))
        return flat

    def point_of(self, point: RecordedPoint) -> dict[str, Any]:
        """{dimension name: value} of a recorded point."""
        return {d.name: v for d, v in zip(self.space.dimensions, point.values)}

    def find(self, flat: Mapping[str, Any]) -> RecordedPoint:
        """The recorded runs of exactly these settings: a point's, or the default's. Settings recorded
        more than once (a point that is the baseline) answer with all their runs."""
        if self._index is None:
            index: dict[str, list[RecordedPoint]] = {}
            for p in [self.default, *self.points]:
                index.setdefault(canonical(self.flat_of(p)), []).append(p)
            self._index = {
                k: ps[0]
                if len(ps) == 1
                else RecordedPoint(
                    ps[0].values,
                    [r for p in ps for r in p.runs],
                    sum(p.failures for p in ps),
                    next((p.error for p in ps if p.error), None),
                    {} if ps[0] is self.default else ps[0].effective,
                )
                for k, ps in index.items()
            }
        point = self._index.get(canonical(flat))
        if point is None:
            raise ReplayError(f"these settings are not a point of the recording: {self._nearest(flat)}")
        return point

    def _nearest(self, flat: Mapping[str, Any]) -> str:
        base = self.flat_of(self.default)
        extra = {
            k: v
            for k, v in flat.items()
            if k not in base
            and not any(
                k in d.knobs() or k in complete(d.settings_of(v2)) for d in self.space.dimensions for v2 in d.values
            )
        }
        if extra:
            return f"knobs outside the space {sorted(extra)} (the space has {[d.name for d in self.space.dimensions]})"
        for d in self.space.dimensions:
            for k in d.knobs():
                if k in flat and not any(complete(d.settings_of(v)).get(k) == flat[k] for v in d.values):
                    return f"{k}={json.dumps(flat[k])} is not one of the recorded values of {d.name}"
        return f"{canonical(flat)} (the baseline of the recording is {canonical(base)})"

    # ---- values

    def value(self, run: Run, objective: Objective) -> float:
        """The objective's value of one recorded run, computed as from a run report."""
        w, r = run[0], run[1]
        bw, br = self.bytes_written or 0, self.bytes_read or 0
        mib = 1024.0 * 1024.0
        totals = {
            "bytes_written": bw,
            "bytes_read": br,
            "write_time_s": w,
            "read_time_s": r,
            "write_bandwidth_mib_s": bw / mib / w if w > 0 else 0.0,
            "read_bandwidth_mib_s": br / mib / r if r > 0 else 0.0,
        }
        return objective.of_totals(totals)

    def median(self, point: RecordedPoint, objective: Objective) -> float | None:
        return statistics.median(self.value(r, objective) for r in point.runs) if point.runs else None

    def measured(self) -> Iterable[RecordedPoint]:
        return (p for p in self.points if p.runs)


def for_study(path: str | os.PathLike, space_spec: str | None = None, baseline: dict | None = None) -> Recording:
    """The recording a study replays; a space or baseline given as well must be the recording's."""
    rec = load(path)
    if space_spec is not None:
        if load_space(space_spec).to_json() != rec.space.to_json():
            raise ReplayError(
                f"--space {space_spec} is not the space recorded in {path} ({rec.space.name}); "
                f"leave --space out to use the recording's"
            )
    if baseline is not None and settings.flatten(baseline) != settings.flatten(rec.baseline):
        raise ReplayError(
            f"--baseline differs from the baseline recorded in {path}; leave it out to use the recording's"
        )
    return rec


def for_config(spec) -> Recording:
    """The recording of a study's ReplaySpec: the same file, with the same content."""
    rec = load(spec.path)
    if spec.sha256 and rec.sha256 != spec.sha256:
        raise ReplayError(
            f"recording '{spec.path}' changed since the study started (its SHA-256 differs): a "
            f"resumed study must replay the same recording; start a new study"
        )
    return rec


def calibration_for(config, option: str | None) -> Calibration:
    """The calibration a study's hybrid model prices operations with: the file named by the strategy's option,
    else the one a replayed recording carries (the machine its runs came from), else this machine's."""
    if option:
        return Calibration.load(option)
    if config.replay is not None:
        rec = load(config.replay.path)
        if rec.calibration is not None:
            return Calibration.from_doc(rec.calibration, f"the calibration in {config.replay.path}")
    return Calibration.load(None)


def effective_of(m: Measurement) -> dict[str, str]:
    """What was in effect in a run: every MPI-IO hint, and the requested knobs read back with one value."""
    out = dict(m.observed)
    for k, values in (m.effective or {}).items():
        if len(values) == 1:
            out[k] = values[0]
    return out


def load(path: str | os.PathLike) -> Recording:
    """Reads a recording, with a clear message for a missing, damaged or foreign file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ReplayError(f"cannot read recording '{path}': {e.strerror}") from None
    digest = hashlib.sha256(raw).hexdigest()
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
    except (OSError, EOFError, ValueError) as e:
        raise ReplayError(f"recording '{path}' is damaged (not readable gzip/JSON: {e})") from None
    try:
        rec = _from_json(doc)
    except (KeyError, TypeError, ValueError, SpaceError, settings.SettingsError) as e:
        detail = f"missing {e}" if isinstance(e, KeyError) else str(e)
        raise ReplayError(f"recording '{path}' is not a valid sweep recording: {detail}") from None
    rec.path, rec.sha256 = path.resolve(), digest
    return rec


def _from_json(doc: Any) -> Recording:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'no "format": "{FORMAT}" (written by bench/sweep.py?)')
    if doc.get("version") != VERSION:
        raise ValueError(f"version {doc.get('version')!r}; this iotuner reads version {VERSION}")
    space = from_json(doc["space"], "the recording's space")
    rec = Recording.new(space, doc["baseline"], list(doc["command"]), int(doc["nodes"]), doc.get("meta", {}))
    rec.bytes_written, rec.bytes_read = doc["bytes"]["written"], doc["bytes"]["read"]
    for key in ("report", "calibration"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise ValueError(f'"{key}" must be an object')
    rec.report, rec.calibration = doc.get("report"), doc.get("calibration")
    if len(doc["points"]) != len(rec.points):
        raise ValueError(f"{len(doc['points'])} points for a space of {len(rec.points)}")
    _fill(rec.default, doc["default"], "default")
    for i, (p, d) in enumerate(zip(rec.points, doc["points"])):
        if [json.dumps(v) for v in d["values"]] != [json.dumps(v) for v in p.values]:
            raise ValueError(f"points[{i}] has values {d['values']}, expected {list(p.values)} (product order)")
        _fill(p, d, f"points[{i}]")
    if any(p.runs for p in rec.points) and not (rec.bytes_written or rec.bytes_read):
        raise ValueError("runs are recorded but not the bytes they moved")
    return rec


def _fill(p: RecordedPoint, d: Mapping[str, Any], where: str) -> None:
    runs = []
    for run in d["runs"]:
        if not (
            isinstance(run, list)
            and len(run) in (2, 3)
            and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 for x in run
            )
        ):
            raise ValueError(f"{where}: a run is [write seconds, read seconds(, others' CPU)], got {json.dumps(run)}")
        runs.append(tuple(float(x) for x in run))
    p.runs = runs
    p.failures = int(d.get("failures", 0))
    p.error = d.get("error")
    eff = d.get("effective")
    if eff is not None and not isinstance(eff, dict):
        raise ValueError(f'{where}: "effective" must be an object')
    p.effective = {str(k): str(v) for k, v in eff.items()} if eff is not None else None


class ReplayEvaluator(OfflineEvaluator):
    """Answers a point of a recorded sweep with one of its recorded runs, drawn at random (seeded
    by the seed and the run's label, so a resumed study draws the same). Its read-back is the one
    recorded, so the tuner deduplicates as it did on the real runs."""

    def __init__(self, recording: Recording, objective: Objective, seed: int = 0):
        if objective.pattern is not None:
            raise ReplayError(
                "a replay knows the recorded phase times only: use the objective perf, write-bw, read-bw or io-time"
            )
        self.recording, self.objective, self.seed = recording, objective, seed
        self.notes: list[str] = []
        ref = recording.default.effective or {}
        self._reference = {k: [v] for k, v in ref.items()}
        self._medians: dict[int, float | None] = {}

    def evaluate(self, doc: dict, label: str) -> Measurement:
        """A run; the default's carries the recording's run report, when it has one (the report's access
        pattern does not depend on the settings' timing, so one report stands for every run of the default)."""
        m = super().evaluate(doc, label)
        if label.startswith("baseline-") and m.ok:
            m.report = self.recording.report
        return m

    def value(self, flat: Mapping[str, Any]) -> float | None:
        """The median of the point's recorded runs (None: every recorded run failed)."""
        point = self.recording.find(flat)
        if id(point) not in self._medians:
            self._medians[id(point)] = self.recording.median(point, self.objective)
        return self._medians[id(point)]

    def answer(self, flat: Mapping[str, Any], rng: random.Random) -> Measurement:
        point = self.recording.find(flat)
        if not point.runs:
            why = f": {point.error}" if point.error else " (none recorded)"
            return Measurement(False, None, 0.0, f"every recorded run failed{why}")
        run = rng.choice(point.runs)
        try:
            value = self.recording.value(run, self.objective)
        except ObjectiveError as e:
            return Measurement(False, None, 0.0, str(e))
        effective = {**self._reference, **{k: [v] for k, v in (point.effective or {}).items()}}
        if point is not self.recording.default and point.effective is None:
            effective = {k: [as_text(v)] for k, v in self.recording.flat_of(point).items()}
        return Measurement(
            True,
            value,
            0.0,
            effective=effective,
            details={"write_s": run[0], "read_s": run[1], "recorded_runs": len(point.runs)},
        )
