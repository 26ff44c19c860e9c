"""A fast synthetic objective: a function of the settings, no MPI.

For strategy tests and benchmarks. A model is a product of factors over
groups of knobs, so its exact optimum over a search space comes from
enumerating each connected block of dimensions instead of the whole space.

- "ufs": one node as measured here (ENVIRONMENT.md): forcing collective
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
import json
import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .. import catalogue
from .evaluate import Measurement
from .objective import Objective
from .space import SearchSpace, complete

M = 1024 * 1024
Factor = Callable[[Mapping[str, Any]], float]


def _default(key: str) -> Any:
    k = catalogue.knobs().get(key)
    return k.default_value() if k else None


def _get(flat: Mapping[str, Any], key: str, default: Any = None) -> Any:
    return flat.get(key, _default(key) if default is None else default)


def _aggregators(flat: Mapping[str, Any], nodes: int, ranks: int) -> int:
    """What ROMIO does with cb_nodes and cb_config_list (default one per node)."""
    lst = str(flat.get("mpiio.cb_config_list", "*:1"))
    per_node = int(lst[2:]) if lst.startswith("*:") and lst[2:].isdigit() else ranks
    wanted = int(flat.get("mpiio.cb_nodes", nodes))
    return max(1, min(wanted, per_node * nodes, ranks))


@dataclass
class Model:
    name: str
    base: float
    groups: list[tuple[frozenset[str], Factor]]
    honoured: frozenset[str]
    nodes: int
    ranks: int

    def effective(self, flat: Mapping[str, Any]) -> dict[str, Any]:
        """The settings that take effect (others are dropped or not applicable)."""
        eff = {k: v for k, v in complete(flat, self.nodes).items() if k in self.honoured}
        if "mpiio.cb_nodes" in eff or "mpiio.cb_config_list" in eff:
            eff["mpiio.cb_nodes"] = _aggregators(eff, self.nodes, self.ranks)
            eff.pop("mpiio.cb_config_list", None)
        return eff

    def value(self, flat: Mapping[str, Any]) -> float:
        eff = self.effective(flat)
        return self.base * math.prod(f(eff) for _, f in self.groups)

    def best(self, space: SearchSpace) -> float:
        """Exact optimum over the space: enumerate each block of dimensions that share a group."""
        dims = space.dimensions
        touches = [{i for i, (knobs, _) in enumerate(self.groups) if d.knobs() & knobs} for d in dims]
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


def _ufs(nodes: int = 1, ranks: int = 2) -> Model:
    def collective_write(e):
        if e.get("hdf5.transfer_mode", "collective") == "independent":
            return 1.25
        cb = e.get("mpiio.romio_cb_write", "automatic")
        if cb == "enable":
            aggs = _aggregators(e, nodes, ranks)
            size = _get(e, "mpiio.cb_buffer_size")
            return (0.18 if aggs == 1 else 0.85) * (0.9 if size <= 1 * M else 0.95 if size >= 64 * M else 1.0)
        return 0.95 if cb == "automatic" else 1.0

    def sieving(e):
        return {"disable": 1.05, "enable": 0.97}.get(e.get("mpiio.romio_ds_write", "automatic"), 1.0)

    def alignment(e):
        return {1 * M: 1.03, 65536: 1.01}.get(_get(e, "hdf5.alignment")[1], 1.0)

    def metadata(e):
        return 0.98 if e.get("hdf5.coll_metadata_reads") or e.get("hdf5.coll_metadata_writes") else 1.0

    def sieve(e):
        return 1.02 if _get(e, "hdf5.sieve_buf_size") == 1 * M else 1.0

    groups = [
        (frozenset({"hdf5.transfer_mode", "mpiio.romio_cb_write", "mpiio.cb_nodes", "mpiio.cb_config_list",
                    "mpiio.cb_buffer_size"}), collective_write),
        (frozenset({"mpiio.romio_ds_write"}), sieving),
        (frozenset({"hdf5.alignment"}), alignment),
        (frozenset({"hdf5.coll_metadata_reads", "hdf5.coll_metadata_writes"}), metadata),
        (frozenset({"hdf5.sieve_buf_size"}), sieve),
    ]
    honoured = frozenset(k for k in catalogue.knobs() if not k.startswith("lustre.")) - {
        "mpiio.striping_factor", "mpiio.striping_unit"} | {"mpiio.romio_cb_read", "mpiio.romio_ds_read"}
    return Model("ufs", 1200.0, groups, honoured, nodes, ranks)


def _lustre(nodes: int = 4, ranks: int = 128) -> Model:
    def count(e):
        return int(e.get("lustre.stripe_count", e.get("mpiio.striping_factor", 1)))

    def size(e):
        return int(e.get("lustre.stripe_size", e.get("mpiio.striping_unit", 1 * M)))

    def striping(e):
        c, s = count(e), size(e)
        c = 156 if c < 0 else max(c, 1)
        aggs = _aggregators(e, nodes, ranks)
        g_c = 1 - math.exp(-c / 24)  # more OSTs help, then saturate
        g_s = math.exp(-(math.log2(s / (16 * M)) ** 2) / 8)  # an optimum near 16 MiB
        g_a = (min(aggs, c) / max(aggs, c)) ** 0.3  # one aggregator per stripe
        buf = int(e.get("mpiio.cb_buffer_size", 16 * M))
        g_b = math.exp(-abs(math.log2(buf / s)) / 6)  # a buffer the size of a stripe
        align = _get(e, "hdf5.alignment")[1]
        g_al = 1.05 if align >= M and s % align == 0 else 1.0  # objects on stripe boundaries
        return 0.02 + g_c * g_s * g_a * g_b * g_al

    def sieve(e):
        return 1.03 if 1 * M <= _get(e, "hdf5.sieve_buf_size") <= 4 * M else 1.0

    def chunk_cache(e):
        nbytes, nslots = _get(e, "hdf5.chunk_cache_nbytes"), _get(e, "hdf5.chunk_cache_nslots")
        return (1.02 if nbytes >= 16 * M else 1.0) * (1.01 if nslots >= 10007 else 1.0)

    def metadata(e):
        mb, mdc = _get(e, "hdf5.meta_block_size"), _get(e, "hdf5.mdc_initial_size")
        return (1.04 if mb >= 1 * M else 1.0) * (1.02 if mdc >= 8 * M else 1.0)

    def collective_metadata(e):
        return (1.06 if e.get("hdf5.coll_metadata_reads") else 1.0) * (1.06 if e.get("hdf5.coll_metadata_writes") else 1.0)

    groups = [
        (frozenset({"lustre.stripe_count", "lustre.stripe_size", "mpiio.striping_factor", "mpiio.striping_unit",
                    "mpiio.cb_nodes", "mpiio.cb_config_list", "mpiio.cb_buffer_size", "hdf5.alignment"}), striping),
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


class SyntheticEvaluator:
    """Evaluates a model instead of running a job: multiplicative log-normal
    noise of sigma, and an optional delay per evaluation to emulate run time."""

    def __init__(self, m: Model, objective: Objective, noise: float = 0.05, delay: float = 0.0, seed: int = 0):
        self.model, self.objective, self.noise, self.delay, self.seed = m, objective, noise, delay, seed
        self.notes: list[str] = []

    def evaluate(self, doc: dict, label: str) -> Measurement:
        from .. import settings
        start = time.monotonic()
        if self.delay:
            time.sleep(self.delay)
        flat: dict[str, Any] = {}
        for group in settings.validate(doc).get("groups", []):
            if "file" not in group and "dataset" not in group:
                for layer, knobs in group.items():
                    if isinstance(knobs, dict):
                        flat.update({f"{layer}.{k}": v for k, v in knobs.items()})
        rng = random.Random(f"{self.seed}:{label}")
        value = self.model.value(flat) * math.exp(rng.gauss(0.0, self.noise))
        eff = self.model.effective(flat)
        return Measurement(True, value, json.dumps(eff, sort_keys=True), time.monotonic() - start)
