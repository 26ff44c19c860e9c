"""A fast synthetic objective: a function of the settings, no MPI.

For strategy tests and benchmarks. A model is a product of factors over
groups of knobs, so its exact optimum over a search space comes from
enumerating each connected block of dimensions instead of the whole space.

- "ufs": one node as measured here (docs/machine.md): forcing collective
  buffering on one aggregator costs ~5x, two aggregators recover most of it,
  independent transfer is best; alignment and data sieving matter a little;
  striping is dropped and Lustre layouts do not apply.
- "lustre": a Lustre system as in the papers: bandwidth grows with the stripe
  count and saturates, the stripe size has an optimum, aggregators should
  match the stripe count, cb_buffer_size the stripe size; HDF5 metadata knobs
  add a little.
- "flat": every configuration is the same (A/A tests).
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import catalogue
from ..settings import as_text, complete, constraints
from .evaluate import Measurement, OfflineEvaluator
from .objective import Objective
from .space import SearchSpace, library_default

M = 1024 * 1024
DATA_MB = 1024.0  # what a run moves, for time objectives: time = DATA_MB / bandwidth
Factor = Callable[[Mapping[str, Any]], float]


@dataclass
class Model:
    name: str
    base: float
    groups: list[tuple[frozenset[str], Factor]]
    honoured: frozenset[str]
    nodes: int
    ranks: int
    app_defaults: dict[str, Any] = field(default_factory=dict)  # what the modelled application sets itself

    def defaults(self) -> dict[str, Any]:
        """The effective settings of a run with no settings: the library's defaults, then the application's."""
        out = {k: library_default(k) for k in self.honoured if library_default(k) is not None}
        return {**out, **{k: v for k, v in self.app_defaults.items() if k in self.honoured}}

    def effective(self, flat: Mapping[str, Any]) -> dict[str, Any]:
        """Every setting in effect in a run with these settings (defaults included).

        Knobs the model does not honour are dropped. A knob with a catalogue
        constraint takes effect only as far as its target allows (cb_nodes up
        to what cb_config_list allows on the nodes; default: all it allows),
        and never beyond the ranks (ROMIO caps aggregators at the processes).
        """
        eff = {**self.defaults(), **{k: v for k, v in complete(flat, self.nodes).items() if k in self.honoured}}
        for key, c in constraints().items():
            if key not in self.honoured:
                continue
            cap = c.capacity(eff.get(c.target, library_default(c.target)), self.nodes)
            wanted = eff.get(key)
            wanted = cap if wanted is None else int(wanted)
            if wanted is not None:
                eff[key] = max(1, min(wanted, cap if cap is not None else wanted, self.ranks))
        return eff

    def value(self, flat: Mapping[str, Any]) -> float:
        """The noise-free bandwidth (MiB/s) of a run with these settings."""
        eff = self.effective(flat)
        return self.base * math.prod(f(eff) for _, f in self.groups)

    def best(self, space: SearchSpace) -> float:
        """Exact optimum (highest bandwidth) over the space: enumerate each block of dimensions that share a group."""
        dims = space.dimensions
        touches = [{i for i, (knobs, _) in enumerate(self.groups) if _knobs_of(d, self) & knobs} for d in dims]
        blocks: list[tuple[set[int], set[int]]] = []  # (dimension indices, group indices)
        for di, gs in enumerate(touches):
            merged_d, merged_g = {di}, set(gs)
            for block in [b for b in blocks if b[1] & merged_g]:
                blocks.remove(block)
                merged_d |= block[0]
                merged_g |= block[1]
            blocks.append((merged_d, merged_g))
        used = set().union(*(g for _, g in blocks)) if blocks else set()
        fixed = self.effective(space.fixed)
        best = self.base * math.prod(f(fixed) for i, (_, f) in enumerate(self.groups) if i not in used)
        for dis, gis in blocks:
            order = sorted(dis)
            top = 0.0
            for combo in itertools.product(*(dims[i].values for i in order)):
                flat = space.point_settings({dims[i].name: v for i, v in zip(order, combo)})
                eff = self.effective(flat)
                top = max(top, math.prod(self.groups[g][1](eff) for g in gis))
            best *= top
        return best


def _knobs_of(d, m: Model) -> set[str]:
    """The knobs a dimension sets, with those the catalogue constraints add."""
    knobs = set(d.knobs())
    return knobs | {c.target for k, c in constraints().items() if k in knobs}


def _ufs(nodes: int = 1, ranks: int = 2) -> Model:
    def collective_write(e):
        if e["hdf5.transfer_mode"] == "independent":
            return 1.25
        cb = e["mpiio.romio_cb_write"]
        if cb == "enable":
            size = e["mpiio.cb_buffer_size"]
            return (0.18 if e["mpiio.cb_nodes"] == 1 else 0.85) * (
                0.9 if size <= 1 * M else 0.95 if size >= 64 * M else 1.0
            )
        return 0.95 if cb == "automatic" else 1.0

    def sieving(e):
        return {"disable": 1.05, "enable": 0.97}.get(e["mpiio.romio_ds_write"], 1.0)

    def alignment(e):
        return {1 * M: 1.03, 65536: 1.01}.get(e["hdf5.alignment"][1], 1.0)

    def metadata(e):
        return 0.98 if e["hdf5.coll_metadata_reads"] or e["hdf5.coll_metadata_writes"] else 1.0

    def sieve(e):
        return 1.02 if e["hdf5.sieve_buf_size"] == 1 * M else 1.0

    groups = [
        (
            frozenset(
                {
                    "hdf5.transfer_mode",
                    "mpiio.romio_cb_write",
                    "mpiio.cb_nodes",
                    "mpiio.cb_config_list",
                    "mpiio.cb_buffer_size",
                }
            ),
            collective_write,
        ),
        (frozenset({"mpiio.romio_ds_write"}), sieving),
        (frozenset({"hdf5.alignment"}), alignment),
        (frozenset({"hdf5.coll_metadata_reads", "hdf5.coll_metadata_writes"}), metadata),
        (frozenset({"hdf5.sieve_buf_size"}), sieve),
    ]
    # ROMIO's ufs driver drops striping hints; Lustre layouts do not apply
    honoured = frozenset(k for k in catalogue.knobs() if not k.startswith("lustre.")) - {
        "mpiio.striping_factor",
        "mpiio.striping_unit",
    }
    # the modelled application (h5ior) asks for collective transfers itself
    return Model("ufs", 1200.0, groups, honoured, nodes, ranks, {"hdf5.transfer_mode": "collective"})


def _lustre(nodes: int = 4, ranks: int = 128) -> Model:
    def count(e):
        return int(e.get("lustre.stripe_count", e.get("mpiio.striping_factor", 1)))

    def size(e):
        return int(e.get("lustre.stripe_size", e.get("mpiio.striping_unit", 1 * M)))

    def striping(e):
        c, s = count(e), size(e)
        c = 156 if c < 0 else max(c, 1)
        aggs = e["mpiio.cb_nodes"]
        g_c = 1 - math.exp(-c / 24)  # more OSTs help, then saturate
        g_s = math.exp(-(math.log2(s / (16 * M)) ** 2) / 8)  # an optimum near 16 MiB
        g_a = (min(aggs, c) / max(aggs, c)) ** 0.3  # one aggregator per stripe
        buf = e["mpiio.cb_buffer_size"]
        g_b = math.exp(-abs(math.log2(buf / s)) / 6)  # a buffer the size of a stripe
        align = e["hdf5.alignment"][1]
        g_al = 1.05 if align >= M and s % align == 0 else 1.0  # objects on stripe boundaries
        return 0.02 + g_c * g_s * g_a * g_b * g_al

    def sieve(e):
        return 1.03 if 1 * M <= e["hdf5.sieve_buf_size"] <= 4 * M else 1.0

    def chunk_cache(e):
        nbytes, nslots = e["hdf5.chunk_cache_nbytes"], e["hdf5.chunk_cache_nslots"]
        return (1.02 if nbytes >= 16 * M else 1.0) * (1.01 if nslots >= 10007 else 1.0)

    def metadata(e):
        mb, mdc = e["hdf5.meta_block_size"], e["hdf5.mdc_initial_size"]
        return (1.04 if mb >= 1 * M else 1.0) * (1.02 if mdc >= 8 * M else 1.0)

    def collective_metadata(e):
        return (1.06 if e["hdf5.coll_metadata_reads"] else 1.0) * (1.06 if e["hdf5.coll_metadata_writes"] else 1.0)

    groups = [
        (
            frozenset(
                {
                    "lustre.stripe_count",
                    "lustre.stripe_size",
                    "mpiio.striping_factor",
                    "mpiio.striping_unit",
                    "mpiio.cb_nodes",
                    "mpiio.cb_config_list",
                    "mpiio.cb_buffer_size",
                    "hdf5.alignment",
                }
            ),
            striping,
        ),
        (frozenset({"hdf5.sieve_buf_size"}), sieve),
        (frozenset({"hdf5.chunk_cache_nbytes", "hdf5.chunk_cache_nslots"}), chunk_cache),
        (frozenset({"hdf5.meta_block_size", "hdf5.mdc_initial_size"}), metadata),
        (frozenset({"hdf5.coll_metadata_reads", "hdf5.coll_metadata_writes"}), collective_metadata),
    ]
    return Model("lustre", 20000.0, groups, frozenset(catalogue.knobs()), nodes, ranks)


def _flat() -> Model:
    # every knob takes effect, none changes anything: a true A/A
    return Model("flat", 1000.0, [], frozenset(catalogue.knobs()), 1, 2)


MODELS = {"ufs": _ufs, "lustre": _lustre, "flat": _flat}


def model(name: str) -> Model:
    if name not in MODELS:
        raise ValueError(f"unknown synthetic model '{name}': use {', '.join(MODELS)}")
    return MODELS[name]()


class SyntheticEvaluator(OfflineEvaluator):
    """Evaluates a model instead of running a job: multiplicative log-normal
    noise of sigma, and an optional delay per evaluation to emulate run time.

    The model gives a bandwidth; an objective to minimize (io-time, or a
    regex objective with --direction min) gets the time to move DATA_MB at
    that bandwidth instead, so every objective is tuned the right way round."""

    def __init__(
        self,
        m: Model,
        objective: Objective,
        noise: float = 0.05,
        delay: float = 0.0,
        seed: int = 0,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.model, self.objective, self.noise, self.delay, self.seed = m, objective, noise, delay, seed
        self.now, self.sleep = now, sleep  # tests give a deterministic clock
        self.notes: list[str] = []

    def value(self, flat: Mapping[str, Any]) -> float:
        """The noise-free objective value of these settings."""
        bandwidth = self.model.value(flat)
        return bandwidth if self.objective.direction == "maximize" else DATA_MB / bandwidth

    def answer(self, flat: Mapping[str, Any], rng: random.Random) -> Measurement:
        if self.delay:
            self.sleep(self.delay)
        value = self.value(flat) * math.exp(rng.gauss(0.0, self.noise))
        eff = self.model.effective(flat)
        return Measurement(
            True,
            value,
            0.0,
            effective={k: [as_text(eff[k])] for k in complete(flat, self.model.nodes) if k in eff},
            observed={k: as_text(v) for k, v in eff.items()},
        )
