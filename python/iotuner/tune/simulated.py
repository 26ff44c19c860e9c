"""`iotuner tune --simulate PLATFORM`: trials answered by the simulator (iotuner simulate), not by runs.

Each trial replays the phases of a run report or Darshan log (--simulate-report) at --ranks ranks on --nodes
nodes of the platform, under the trial's settings, and its objective is computed from the predicted phase
times and the phases' bytes as from a run report. The simulator is deterministic: a point is simulated once
and its runs answer the same. What took effect is what the simulator modelled: the MPI-IO hints with the
aggregators ROMIO would use, and the stripe layout (on a Lustre platform); other knobs do not change a
prediction and are reported as not in effect, so points that differ only in them are one experiment.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..settings import as_text
from .evaluate import Measurement, OfflineEvaluator
from .objective import Objective


def spec(platform: str, report: str | None, calibration: str | None = None) -> dict:
    """The study's record of a simulated objective: the platform's description itself (a study resumed
    after the calibration changed simulates the same platform), the workload's path and digest."""
    from ..simulate import platform as platforms

    if not report:
        raise ValueError(
            "--simulate needs --simulate-report REPORT: the run report or Darshan log whose phases it replays"
        )
    path = Path(report).resolve()
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise ValueError(f"--simulate-report {report}: {e.strerror}") from None
    pf = platforms.load(platform, calibration)  # PlatformError is a ValueError: bad input
    return {"platform": pf.to_json(), "platform_name": platform, "report": str(path), "sha256": digest}


class SimulatedEvaluator(OfflineEvaluator):
    def __init__(self, record: Mapping[str, Any], objective: Objective, ranks: int, nodes: int, seed: int = 0):
        from ..simulate import platform as platforms
        from ..simulate import workload

        self.objective, self.seed, self.nodes = objective, seed, nodes
        path = Path(record["report"])
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as e:
            raise ValueError(f"the study simulates {path}, which cannot be read now ({e.strerror})") from None
        if digest != record["sha256"]:
            raise ValueError(
                f"the study simulates {path}, which changed since the study began: restore it or start a new study"
            )
        self.platform = platforms.from_json(record["platform"], record.get("platform_name", "the study's platform"))
        self.workload = workload.load(str(path), ranks)
        self.platform.check_nodes(nodes)
        self.notes: list[str] = list(self.workload.notes)
        self._cache: dict[tuple, tuple[float, dict]] = {}

    def describe(self) -> str:
        return (
            f"simulated: {self.workload.source} at {self.workload.ranks} ranks on {self.nodes} node(s) of "
            f"platform {self.platform.name}"
        )

    def _simulate(self, flat: Mapping[str, Any]):
        from ..simulate import engine, trace

        modelled = {
            k: v
            for k, v in flat.items()
            if k.startswith("mpiio.")
            or k == "hdf5.transfer_mode"
            or (k.startswith("lustre.stripe_") and self.platform.lustre)
        }
        key = tuple(sorted((k, as_text(v)) for k, v in modelled.items()))
        if key not in self._cache:
            res = engine.simulate(self.workload, self.platform, self.nodes, dict(modelled))
            setup = trace.setup(
                dict(modelled), self.workload.phases[0].app_hints, self.platform, self.workload.ranks, self.nodes
            )
            eff = {f"mpiio.{k}": v for k, v in setup.mpiio.items()}
            eff["mpiio.cb_nodes"] = str(setup.hints.cb_nodes)  # as ROMIO caps it
            if "hdf5.transfer_mode" in modelled:
                eff["hdf5.transfer_mode"] = as_text(modelled["hdf5.transfer_mode"])
            if self.platform.lustre:
                eff["lustre.stripe_count"], eff["lustre.stripe_size"] = str(setup.stripe_count), str(setup.stripe_size)
            self._cache[key] = (res, eff)
        return self._cache[key]

    def value(self, flat: Mapping[str, Any]) -> float:
        res, _ = self._simulate(flat)
        write = [p for p in res.phases if p.label.endswith("write")]
        read = [p for p in res.phases if p.label.endswith("read")]
        tw, tr = sum(p.seconds for p in write), sum(p.seconds for p in read)
        bw, br = sum(p.bytes for p in write), sum(p.bytes for p in read)
        name = self.objective.name
        if name == "io-time":
            return tw + tr
        if name == "write-bw" and tw > 0:
            return bw / 2**20 / tw
        if name == "read-bw" and tr > 0:
            return br / 2**20 / tr
        if name == "perf" and tw + tr > 0:  # TunIO's perf: bandwidths weighted by the written share
            alpha = bw / (bw + br)
            return alpha * (bw / 2**20 / tw if tw else 0.0) + (1 - alpha) * (br / 2**20 / tr if tr else 0.0)
        raise ValueError(
            f"objective {name} cannot be simulated for {self.workload.source} (it has no "
            f"{'writes' if name == 'write-bw' else 'reads' if name == 'read-bw' else 'phases'})"
        )

    def answer(self, flat: Mapping[str, Any], rng: random.Random) -> Measurement:
        from ..simulate import engine

        try:
            value = self.value(flat)
            _, eff = self._simulate(flat)
        except (engine.SimulateError, ValueError) as e:
            return Measurement(False, None, 0.0, error=str(e))
        return Measurement(
            True,
            value,
            0.0,
            effective={k: [as_text(eff[k])] for k in flat if k in eff},
            observed={k: as_text(v) for k, v in eff.items()},
        )
