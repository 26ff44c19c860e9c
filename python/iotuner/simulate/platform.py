"""Platform descriptions for `iotuner simulate`: nodes, network, storage targets, file layout, collective costs.

A platform file (JSON, format "iotuner-platform") gives bandwidths in GB/s (10^9 bytes/s, as vendors state
them) and latencies in microseconds; the bundled ones are in `platforms/` (a Lustre template to fill in, and
NERSC's Hopper as the papers state it). `here` is this machine, derived from its calibration file
(`iotuner calibrate`): the measured point-to-point, pwrite and pread costs become copy rates, latencies and a
storage bandwidth, and the measured collectives a table. docs/simulate.md describes every field.
"""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .. import inputs, native, schema
from ..perfmodel import calibration as cal

FORMAT = "iotuner-platform"
VERSION = 1
GB = 1e9
US = 1e-6
BUNDLED = Path(__file__).resolve().parent / "platforms"
COLLECTIVE_OPS = ("allgather", "alltoall", "allreduce", "bcast")


class PlatformError(ValueError):
    """A platform that cannot be used: unknown name, unreadable or incomplete file."""


class LogP:
    """MPICH's collective algorithms' costs (Thakur, Rabenseifner and Gropp, IJHPCA 2005) on P ranks, with a
    per-step latency alpha (s) and a per-byte time beta (s/B): allgather by recursive doubling, alltoall by
    Bruck's algorithm (small messages), allreduce by recursive doubling, bcast by a binomial tree."""

    def __init__(self, alpha: float, beta: float):
        self.alpha, self.beta = alpha, beta

    def seconds(self, op: str, nbytes: int, nprocs: int) -> float:
        if nprocs <= 1:
            return 0.0
        steps = math.ceil(math.log2(nprocs))
        if op == "allgather":
            return steps * self.alpha + (nprocs - 1) * nbytes * self.beta
        if op == "alltoall":
            return steps * (self.alpha + nprocs / 2 * nbytes * self.beta)
        if op == "allreduce":
            return steps * (self.alpha + nbytes * self.beta)
        return steps * (self.alpha + nbytes * self.beta)  # bcast

    def describe(self) -> str:
        return f"log-P model, {self.alpha / US:g} us a step"


class Measured:
    """Collective costs measured here (the calibration's records): at a measured rank count the fastest
    pass, interpolated in log(bytes); between measured rank counts interpolated in log(ranks); beyond the
    largest, scaled by the steps of MPICH's algorithms (ceil(log2 P))."""

    def __init__(self, table: dict[str, dict[int, list[tuple[int, float]]]]):
        self.table = table

    def _at(self, op: str, nbytes: int, nprocs: int) -> float:
        points = self.table[op][nprocs]
        xs = [math.log2(max(1, b)) for b, _ in points]
        x = math.log2(max(1, nbytes))
        if x <= xs[0]:
            return points[0][1]
        for (x0, (_, t0)), (x1, (_, t1)) in zip(zip(xs, points), zip(xs[1:], points[1:])):
            if x <= x1:
                return t0 + (t1 - t0) * (x - x0) / (x1 - x0)
        (b0, t0), (b1, t1) = points[-2], points[-1]  # beyond: linear in bytes
        return t1 + (t1 - t0) / max(1, b1 - b0) * (nbytes - b1)

    def seconds(self, op: str, nbytes: int, nprocs: int) -> float:
        if nprocs <= 1:
            return 0.0
        have = sorted(self.table[op])
        if nprocs in have:
            return self._at(op, nbytes, nprocs)
        below = [n for n in have if n < nprocs]
        above = [n for n in have if n > nprocs]
        if below and above:
            lo, hi = below[-1], above[0]
            f = (math.log2(nprocs) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
            return self._at(op, nbytes, lo) * (1 - f) + self._at(op, nbytes, hi) * f
        top = have[-1]
        return self._at(op, nbytes, top) * math.ceil(math.log2(nprocs)) / max(1, math.ceil(math.log2(top)))

    def describe(self) -> str:
        ranks = sorted({n for op in self.table.values() for n in op})
        return f"measured on {ranks[0]}-{ranks[-1]} ranks, log-P beyond"


@dataclass
class Platform:
    name: str
    description: str
    cores: int  # per node
    copy_bw: float  # B/s of one core copying a message it receives (intra-node)
    memory_bw: float  # B/s of a node's memory link (every intra-node message crosses it)
    memory_latency: float  # s per intra-node message
    write_copy_bw: float  # B/s of one core copying a pwrite's data (0: none)
    read_copy_bw: float
    storage: dict  # kind, osts, oss, ost_write_bw, ost_read_bw, oss_bw, oss_latency, overheads
    collectives: object  # LogP or Measured
    busy_poll: bool = True  # ranks spin in blocking MPI calls (MPICH): more ranks than cores share them
    nic_bw: float = 0.0  # B/s per node (0: one node only)
    nic_latency: float = 0.0
    client_bw: float = 0.0  # B/s of a node's file traffic as a Lustre client, below nic_bw (0: only the NIC)
    backbone_bw: float = 0.0
    backbone_latency: float = 0.0
    stripe_count: int = 1  # the file layout when the settings give none
    stripe_size: int = 1 << 20
    cb_nodes_default: str = "nodes"  # ROMIO's default aggregators: one per node ("nodes") or "stripe_count"
    write_copy_first_bw: float = 0.0  # writes to a new file, when they differ (0: write_copy_bw)
    ost_write_first_bw: float = 0.0
    latency_by_ranks: dict[int, float] = field(default_factory=dict)  # here: message latency by ranks per node
    self_copy: list[tuple[int, float]] = field(default_factory=list)  # here: (bytes, s) of a message to oneself
    # here: ranks -> s each collective costs inside a running application beyond the micro-benchmark's
    # (ranks arriving apart instead of released together; negative where it costs less), bench/simulate.py
    in_situ: dict[int, float] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def lustre(self) -> bool:
        return self.storage["kind"] == "lustre"

    def message_latency(self, ranks_per_node: int) -> float:
        if not self.latency_by_ranks:
            return self.memory_latency
        have = sorted(self.latency_by_ranks)
        fit = [n for n in have if n >= ranks_per_node]
        return self.latency_by_ranks[fit[0] if fit else have[-1]]

    def collective_seconds(self, op: str, nbytes: int, nprocs: int) -> float:
        """One collective inside an application: the model's or table's cost, plus the in-situ difference
        measured at this rank count (the count at or above it, else the largest; none: nothing)."""
        base = self.collectives.seconds(op, nbytes, nprocs)
        if not self.in_situ or nprocs <= 1:
            return base
        have = sorted(self.in_situ)
        fit = [n for n in have if n >= nprocs]
        return max(0.0, base + self.in_situ[fit[0] if fit else have[-1]])

    def self_copy_seconds(self, nbytes: int) -> float:
        """A rank copying its own data into or out of the collective buffer (ROMIO's message to itself): the
        measured curve where there is one (a buffer that fits the caches copies faster), else one core's copy."""
        pts = self.self_copy
        if not pts:
            return nbytes / self.copy_bw
        if nbytes <= pts[0][0]:
            return pts[0][1]
        for (b0, t0), (b1, t1) in zip(pts, pts[1:]):
            if nbytes <= b1:
                return t0 + (t1 - t0) * (nbytes - b0) / (b1 - b0)
        (b0, t0), (b1, t1) = pts[-2], pts[-1]  # beyond: at the largest sizes' rate
        return t1 + (t1 - t0) / (b1 - b0) * (nbytes - b1)

    def header(
        self, ranks: int, nodes: int, stripe_count: int, stripe_size: int, new_file: bool, per_process: bool = False
    ) -> dict:
        """The engine's description of this platform for one simulation."""
        per_node = -(-ranks // nodes)
        st = self.storage
        first = new_file and self.write_copy_first_bw > 0
        return {
            "format": "iotuner-iosim",
            "version": 1,
            "ranks": ranks,
            "nodes": nodes,
            "platform": {
                "cores": self.cores,
                "core_speed": 1e9,
                "copy_bw": self.copy_bw,
                "write_copy_bw": self.write_copy_first_bw if first else self.write_copy_bw,
                "read_copy_bw": self.read_copy_bw,
                "busy_poll": self.busy_poll,
                "mem_bw": self.memory_bw,
                "mem_latency": self.message_latency(per_node),
                "nic_bw": self.nic_bw,
                "nic_latency": self.nic_latency,
                "client_bw": self.client_bw,
                "backbone_bw": self.backbone_bw,
                "backbone_latency": self.backbone_latency,
                "storage": {
                    "kind": st["kind"],
                    "osts": st.get("osts", 1),
                    "oss": st.get("oss", 0),
                    "ost_write_bw": self.ost_write_first_bw
                    if new_file and self.ost_write_first_bw
                    else st["ost_write_bw"],
                    "ost_read_bw": st["ost_read_bw"],
                    "oss_bw": st.get("oss_bw", 0.0),
                    "oss_latency": st.get("oss_latency", 0.0),
                    "write_overhead_s": st.get("write_overhead", 0.0),
                    "read_overhead_s": st.get("read_overhead", 0.0),
                },
            },
            "layout": {
                "stripe_count": stripe_count,
                "stripe_size": stripe_size,
                "first_ost": 0,
                "file_per_process": per_process,
            },
        }

    def check_nodes(self, nodes: int) -> None:
        if nodes > 1 and (self.nic_bw <= 0 or self.backbone_bw <= 0):
            raise PlatformError(
                f"platform '{self.name}' is one node (it has no network): simulate with --nodes 1, "
                f"or describe the network in a platform file (docs/simulate.md)"
            )

    def to_json(self) -> dict:
        """The platform as a file (`iotuner simulate --platform here --save-platform FILE`)."""
        st = self.storage
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "description": self.description,
            "nodes": {
                "cores": self.cores,
                "copy_GBps": self.copy_bw / GB,
                "memory_GBps": self.memory_bw / GB,
                "memory_latency_us": self.memory_latency / US,
                "write_copy_GBps": self.write_copy_bw / GB,
                "read_copy_GBps": self.read_copy_bw / GB,
                "busy_poll": self.busy_poll,
            },
            "storage": {
                "kind": st["kind"],
                "osts": st.get("osts", 1),
                "oss": st.get("oss", 0),
                "ost_write_GBps": st["ost_write_bw"] / GB,
                "ost_read_GBps": st["ost_read_bw"] / GB,
                "oss_GBps": st.get("oss_bw", 0.0) / GB,
                "oss_latency_us": st.get("oss_latency", 0.0) / US,
                "write_overhead_us": st.get("write_overhead", 0.0) / US,
                "read_overhead_us": st.get("read_overhead", 0.0) / US,
            },
            "layout": {"stripe_count": self.stripe_count, "stripe_size": self.stripe_size},
            "defaults": {"cb_nodes": self.cb_nodes_default},
            "assumptions": list(self.assumptions),
        }
        if self.write_copy_first_bw:
            doc["nodes"]["write_copy_first_GBps"] = self.write_copy_first_bw / GB
        if self.ost_write_first_bw:
            doc["storage"]["ost_write_first_GBps"] = self.ost_write_first_bw / GB
        if self.self_copy:
            doc["nodes"]["self_copy_us_by_bytes"] = [[b, t / US] for b, t in self.self_copy]
        if self.latency_by_ranks:
            doc["nodes"]["latency_us_by_ranks"] = {str(n): v / US for n, v in sorted(self.latency_by_ranks.items())}
        if self.nic_bw:
            doc["nodes"].update({"nic_GBps": self.nic_bw / GB, "nic_latency_us": self.nic_latency / US})
            doc["network"] = {"backbone_GBps": self.backbone_bw / GB, "latency_us": self.backbone_latency / US}
        if self.client_bw:
            doc["nodes"]["client_GBps"] = self.client_bw / GB
        c = self.collectives
        if isinstance(c, LogP):
            doc["collectives"] = {"model": "log-p", "latency_us": c.alpha / US, "GBps": 1 / c.beta / GB}
        else:
            doc["collectives"] = {
                "model": "measured",
                "table": {
                    op: {str(n): [[b, t] for b, t in pts] for n, pts in sorted(by.items())}
                    for op, by in c.table.items()
                },
            }
        if self.in_situ:
            doc["collectives"]["in_situ_us_by_ranks"] = {str(n): v / US for n, v in sorted(self.in_situ.items())}
        return doc


# ---- reading a platform file ----


def _num(doc: dict, key: str, where: str, default=None, positive: bool = True) -> float:
    v = doc.get(key, default)
    if v is None:
        raise PlatformError(f"{where}: '{key}' is missing")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise PlatformError(f"{where}: '{key}' must be a number {'> 0' if positive else '>= 0'}, not {v!r}")
    return float(v)


def _size(value, where: str) -> int:
    try:
        n = native.core().parse_size(str(value))
    except ValueError as e:
        raise PlatformError(f"{where}: {e}") from None
    if n < 1:
        raise PlatformError(f"{where}: must be at least 1 byte")
    return n


def from_json(doc, source: str) -> Platform:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise PlatformError(f'{source} is not an iotuner platform file (format "{FORMAT}")')
    if doc.get("version") != VERSION:
        raise PlatformError(f"{source}: platform file version {doc.get('version')!r}; this iotuner reads {VERSION}")

    try:  # the shapes (docs/platform.schema.json), so that what follows can trust them
        schema.check(doc, "platform.schema.json")
    except schema.SchemaError as e:
        raise PlatformError(f"platform file {source} is damaged: {e}") from None
    nodes, storage = doc.get("nodes"), doc.get("storage")
    if not isinstance(nodes, dict) or not isinstance(storage, dict):
        raise PlatformError(f"{source}: needs the objects 'nodes' and 'storage'")
    kind = storage.get("kind")
    if kind not in ("local", "lustre"):
        raise PlatformError(f'{source}: storage.kind must be "local" or "lustre", not {kind!r}')
    w = f"{source}: storage"
    st = {
        "kind": kind,
        "osts": int(_num(storage, "osts", w, 1)),
        "oss": int(_num(storage, "oss", w, 0, False)),
        "ost_write_bw": _num(storage, "ost_write_GBps", w) * GB,
        "ost_read_bw": _num(storage, "ost_read_GBps", w) * GB,
        "oss_bw": _num(storage, "oss_GBps", w, 0, False) * GB,
        "oss_latency": _num(storage, "oss_latency_us", w, 0, False) * US,
        "write_overhead": _num(storage, "write_overhead_us", w, 0, False) * US,
        "read_overhead": _num(storage, "read_overhead_us", w, 0, False) * US,
    }
    if kind == "lustre" and (st["oss"] < 1 or st["oss_bw"] <= 0):
        raise PlatformError(f"{source}: a lustre platform needs storage.oss (servers) and storage.oss_GBps")
    n = f"{source}: nodes"
    net = doc.get("network") or {}
    coll = doc.get("collectives") or {}
    if coll.get("model", "log-p") == "log-p":
        collectives = LogP(
            _num(coll, "latency_us", f"{source}: collectives", 5.0) * US,
            1 / (_num(coll, "GBps", f"{source}: collectives", 5.0) * GB),
        )
    elif coll.get("model") == "measured" and isinstance(coll.get("table"), dict):
        try:
            collectives = Measured(
                {
                    op: {int(k): sorted((int(b), float(t)) for b, t in pts) for k, pts in by.items()}
                    for op, by in coll["table"].items()
                }
            )
        except (TypeError, ValueError, AttributeError):
            raise PlatformError(
                f"{source}: collectives.table must map operation -> ranks -> [[bytes, seconds]]"
            ) from None
        for op, by in collectives.table.items():
            for k, pts in by.items():
                if len({b for b, _ in pts}) < len(pts):
                    raise PlatformError(f"{source}: collectives.table.{op}.{k} gives one size twice")
        if set(COLLECTIVE_OPS) - set(collectives.table):
            raise PlatformError(
                f"{source}: collectives.table lacks {', '.join(sorted(set(COLLECTIVE_OPS) - set(collectives.table)))}"
            )
    else:
        raise PlatformError(f'{source}: collectives.model must be "log-p" or "measured" (with a table)')
    layout = doc.get("layout") or {}
    defaults = doc.get("defaults") or {}
    cb_default = defaults.get("cb_nodes", "nodes")
    if cb_default not in ("nodes", "stripe_count"):
        raise PlatformError(f'{source}: defaults.cb_nodes must be "nodes" or "stripe_count"')
    pf = Platform(
        name=str(doc.get("name") or Path(source).stem),
        description=str(doc.get("description", "")),
        cores=int(_num(nodes, "cores", n)),
        copy_bw=_num(nodes, "copy_GBps", n) * GB,
        memory_bw=_num(nodes, "memory_GBps", n) * GB,
        memory_latency=_num(nodes, "memory_latency_us", n, 0, False) * US,
        write_copy_bw=_num(nodes, "write_copy_GBps", n, 0, False) * GB,
        read_copy_bw=_num(nodes, "read_copy_GBps", n, 0, False) * GB,
        write_copy_first_bw=_num(nodes, "write_copy_first_GBps", n, 0, False) * GB,
        ost_write_first_bw=_num(storage, "ost_write_first_GBps", w, 0, False) * GB,
        storage=st,
        collectives=collectives,
        busy_poll=bool(nodes.get("busy_poll", True)),
        nic_bw=_num(nodes, "nic_GBps", n, 0, False) * GB,
        nic_latency=_num(nodes, "nic_latency_us", n, 0, False) * US,
        client_bw=_num(nodes, "client_GBps", n, 0, False) * GB,
        backbone_bw=_num(net, "backbone_GBps", f"{source}: network", 0, False) * GB,
        backbone_latency=_num(net, "latency_us", f"{source}: network", 0, False) * US,
        stripe_count=int(_num(layout, "stripe_count", f"{source}: layout", 1)),
        stripe_size=_size(layout.get("stripe_size", "1M"), f"{source}: layout.stripe_size"),
        cb_nodes_default=cb_default,
        assumptions=[str(a) for a in doc.get("assumptions", [])],
        source=source,
    )
    by_ranks = nodes.get("latency_us_by_ranks")
    if isinstance(by_ranks, dict):
        pf.latency_by_ranks = {int(k): float(v) * US for k, v in by_ranks.items()}
    in_situ = coll.get("in_situ_us_by_ranks")
    if in_situ is not None:
        try:
            pf.in_situ = {int(n): float(v) * US for n, v in in_situ.items()}
        except (TypeError, ValueError, AttributeError):
            raise PlatformError(f"{source}: collectives.in_situ_us_by_ranks must map ranks -> microseconds") from None
    copies = nodes.get("self_copy_us_by_bytes")
    if copies is not None:
        try:
            pf.self_copy = sorted((int(b), float(t) * US) for b, t in copies)
        except (TypeError, ValueError):
            raise PlatformError(f"{n}: self_copy_us_by_bytes must be [[bytes, microseconds], ...]") from None
        if len(pf.self_copy) < 2 or len({b for b, _ in pf.self_copy}) < len(pf.self_copy):
            raise PlatformError(f"{n}: self_copy_us_by_bytes needs two or more distinct sizes")
    if kind == "lustre" and (pf.nic_bw <= 0 or pf.backbone_bw <= 0):
        raise PlatformError(f"{source}: a lustre platform needs nodes.nic_GBps and network.backbone_GBps")
    return pf


def bundled() -> list[str]:
    return sorted(p.stem for p in BUNDLED.glob("*.json"))


def load(spec: str, calibration: str | None = None) -> Platform:
    """`here` (this machine's calibration), a bundled platform's name, or a platform file."""
    if spec == "here":
        try:
            records, meta = cal.measurements(Path(calibration) if calibration else None)
        except cal.CalibrationError as e:
            raise PlatformError(str(e)) from None
        return from_calibration(records, meta)
    if not spec:
        raise PlatformError(f"the platform is empty: give 'here', a platform file, or one of {', '.join(bundled())}")
    path = Path(spec)
    if not path.exists() and (BUNDLED / f"{spec}.json").exists():
        path = BUNDLED / f"{spec}.json"
    if not path.exists():
        raise PlatformError(f"no platform '{spec}': give 'here', a platform file, or one of {', '.join(bundled())}")

    try:
        doc = inputs.read_json(path, "an iotuner platform file")
    except inputs.InputError as e:
        raise PlatformError(f"cannot read platform file {path}: {e}") from None
    return from_json(doc, str(path))


# ---- this machine, from its calibration ----


def _fastest(records: list[dict], **match) -> dict[int, float]:
    """bytes -> the fastest pass's seconds, of the records matching every field given. Other work on the
    shared cores only adds time, so the fastest pass is the operation's own cost (the validation compares
    with the fastest run for the same reason)."""
    by: dict[int, list[float]] = {}
    for r in records:
        if all(r.get(k) == v for k, v in match.items()) and r["seconds"] > 0:
            by.setdefault(int(r["bytes"]), []).append(float(r["seconds"]))
    return {b: min(ts) for b, ts in sorted(by.items())}


def _line(points: dict[int, float], small: int = 4096, large: int = 1 << 20) -> tuple[float, float]:
    """(latency s, bandwidth B/s) of t = latency + bytes / bandwidth: the latency from the small sizes, the
    bandwidth from the large ones."""
    lat = statistics.median([t for b, t in points.items() if b <= small] or [min(points.values())])
    rates = [b / (t - lat) for b, t in points.items() if b >= large and t > lat]
    if not rates:
        raise PlatformError(
            "the calibration has no large transfers to derive a bandwidth from "
            "(run iotuner calibrate with --max-bytes of 4M or more)"
        )
    return lat, statistics.median(rates)


def from_calibration(records: list[dict], meta: dict, cores: int | None = None) -> Platform:
    """This machine as a platform: one node of `cores` cores (os.cpu_count()), its file system a local target.

    - a received message: the receiver's core copies it at the rate the point-to-point exchanges of two
      ranks measured; its latency is theirs (per rank count, where the calibration ran more ranks);
    - a message to oneself (an aggregator's own data into or out of the collective buffer): the one-rank
      exchange's time at each size, or the cold copy's where measured (`copy_cold`), whichever is slower;
    - pwrite / pread: the calling core copies the data at the single-writer rate (new file and steady
      state apart); the file system's aggregate bandwidth is what the most concurrent writers measured
      reached, so it binds only when they share more than their cores give. Reads are priced as the first
      read of a region just written where measured (pread with `first`): a phase reads what an earlier one
      wrote, and here that took about twice as long as reading a region again.

    Cold: after the rank touched more memory than its caches hold. A phase's data streams from memory; the
    same buffer copied again in a micro-benchmark sits in the caches and copies up to 4 times as fast.
    - collectives: the measured table.
    """
    cores = cores or os.cpu_count() or 1
    try:
        pair = _fastest(records, op="p2p", nprocs=2)
        if not pair:
            raise PlatformError(
                "the calibration has no two-rank point-to-point measurements: run iotuner "
                "calibrate with --ranks 2 or more"
            )
        msg_lat, msg_bw = _line(pair)
        cold_copy = _fastest(records, op="copy_cold", writers=1)
        self_copy = sorted((b, max(t, cold_copy.get(b, 0.0))) for b, t in _fastest(records, op="p2p", nprocs=1).items())
        latency = {}
        for n in sorted({int(r["nprocs"]) for r in records if r["op"] == "p2p" and r["nprocs"] >= 2}):
            small = [t for b, t in _fastest(records, op="p2p", nprocs=n).items() if b <= 4096]
            if small:
                latency[n] = statistics.median(small)
        w_lat, w_bw = _line(_fastest(records, op="pwrite", writers=1, first=0, sync=0))
        _, w_first = _line(_fastest(records, op="pwrite", writers=1, first=1, sync=0))
        first_read = int(any(r["op"] == "pread" and r.get("first") for r in records))
        r_lat, r_bw = _line(_fastest(records, op="pread", writers=1, first=first_read))
        most = min(cores, max(int(r["writers"]) for r in records if r["op"] == "pwrite"))

        def aggregate(op: str, single: float, **match) -> float:
            if most < 2:
                return single * cores
            _, per = _line(_fastest(records, op=op, writers=most, **match))
            return max(per * most, single)

        disk_w = aggregate("pwrite", w_bw, first=0, sync=0)
        disk_w_first = aggregate("pwrite", w_first, first=1, sync=0)
        disk_r = aggregate("pread", r_bw, first=first_read)
        table: dict[str, dict[int, list[tuple[int, float]]]] = {}
        for op in COLLECTIVE_OPS:
            for n in sorted({int(r["nprocs"]) for r in records if r["op"] == op}):
                table.setdefault(op, {})[n] = sorted(_fastest(records, op=op, nprocs=n).items())
        if set(COLLECTIVE_OPS) - set(table):
            raise PlatformError("the calibration lacks collective measurements: run iotuner calibrate again")
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, PlatformError):
            raise
        raise PlatformError(
            f"the calibration's measurements are incomplete ({e}): run iotuner calibrate again"
        ) from None
    host = meta.get("host", "this machine")
    return Platform(
        name="here",
        description=f"{host}, one node of {cores} cores, from its calibration ({meta.get('created', '')})",
        cores=cores,
        copy_bw=msg_bw,
        memory_bw=msg_bw * cores,
        memory_latency=msg_lat,
        write_copy_bw=w_bw,
        write_copy_first_bw=w_first,
        read_copy_bw=r_bw,
        storage={
            "kind": "local",
            "osts": 1,
            "oss": 0,
            "ost_write_bw": disk_w,
            "ost_read_bw": disk_r,
            "write_overhead": w_lat,
            "read_overhead": r_lat,
        },
        ost_write_first_bw=disk_w_first,
        collectives=Measured(table),
        latency_by_ranks=latency,
        self_copy=self_copy,
        assumptions=[
            f"calibrated on {meta.get('ranks', '?')} ranks in {meta.get('dir', '?')}",
            "one node: no network",
            "ranks busy-poll in blocking MPI calls (MPICH)",
        ],
        source=f"calibration of {host}",
    )
