"""The ROMIO hints that shape collective and independent I/O, with the generic (UFS) driver's defaults."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import native

MODES = ("enable", "disable", "automatic")


def _size(value, default: int) -> int:
    if value is None or value == "":
        return default
    return native.core().parse_size(str(value))


def _mode(hints: dict, name: str, default: str = "automatic") -> str:
    value = hints.get(name)
    v = str(value).lower() if value is not None else default
    if v not in MODES:
        raise ValueError(f"ROMIO hint {name}='{value}': expected one of {', '.join(MODES)}")
    return v


def aggregators(cb_config_list: str, nodes: list[list[int]], cb_nodes: int | None) -> list[int]:
    """ROMIO's aggregator ranks (its ranklist) for a `cb_config_list` of the `*:k` form (`*` alone: one per node):
    per node in order, its first k ranks; then the first cb_nodes of them. Other lists name hosts, which a
    model of one allocation cannot know: they fall back to one aggregator per node."""
    per_node = 1
    spec = (cb_config_list or "*:1").strip()
    if spec.startswith("*"):
        tail = spec[1:]
        if tail.startswith(":"):
            per_node = len(nodes[0]) if tail[1:] == "*" else int(tail[1:])
    ranks = [r for node in nodes for r in node[:per_node]]
    if cb_nodes is not None and cb_nodes > 0:
        ranks = ranks[:cb_nodes]
    return ranks


def lustre_aggregators(cb_nodes: int, stripe_count: int, co_ratio: int = 1) -> int:
    """ADIOI_LUSTRE_Get_striping_info's avail_cb_nodes: the aggregators of a collective write in ROMIO's
    Lustre driver (lustre.py)."""
    if cb_nodes < 1 or stripe_count <= 0:
        return max(1, cb_nodes)
    if cb_nodes >= stripe_count:
        return stripe_count * min(cb_nodes // stripe_count, max(1, co_ratio))
    return max(d for d in range(1, cb_nodes + 1) if stripe_count % d == 0)


@dataclass(frozen=True)
class Hints:
    cb_nodes: int  # aggregators (after ROMIO's cap by cb_config_list)
    ranklist: tuple[int, ...]  # their ranks
    cb_buffer_size: int = 16 * 1024 * 1024
    cb_write: str = "automatic"
    cb_read: str = "automatic"
    ds_write: str = "automatic"
    ds_read: str = "automatic"
    ind_wr_buffer_size: int = 512 * 1024
    ind_rd_buffer_size: int = 4 * 1024 * 1024
    striping_unit: int = 0
    min_fdomain_size: int = 0
    striping_factor: int = 0  # the file's stripe count (0: not known)
    co_ratio: int = 1  # romio_lustre_co_ratio: aggregators per OST in the Lustre driver's writes
    lustre: bool = False  # collective writes take ROMIO's Lustre driver (lustre.py), not the generic one

    @classmethod
    def from_mapping(cls, hints: dict, nprocs: int, ranks_per_node: int | None = None, lustre: bool = False) -> Hints:
        """From MPI-IO hint strings (a settings document's `mpiio` part, or the hints read back). lustre: the
        file is on ROMIO's Lustre driver (a run report's `mpiio_driver`, a Lustre platform of the simulator)."""
        per = ranks_per_node or nprocs
        nodes = [list(range(i, min(i + per, nprocs))) for i in range(0, nprocs, per)]
        want = hints.get("cb_nodes")
        ranklist = aggregators(hints.get("cb_config_list", "*:1"), nodes, int(want) if want else None)
        return cls(
            cb_nodes=len(ranklist),
            ranklist=tuple(ranklist),
            cb_buffer_size=_size(hints.get("cb_buffer_size"), 16 * 1024 * 1024),
            cb_write=_mode(hints, "romio_cb_write"),
            cb_read=_mode(hints, "romio_cb_read"),
            ds_write=_mode(hints, "romio_ds_write"),
            ds_read=_mode(hints, "romio_ds_read"),
            ind_wr_buffer_size=_size(hints.get("ind_wr_buffer_size"), 512 * 1024),
            ind_rd_buffer_size=_size(hints.get("ind_rd_buffer_size"), 4 * 1024 * 1024),
            striping_unit=_size(hints.get("striping_unit"), 0),
            min_fdomain_size=_size(hints.get("romio_min_fdomain_size"), 0),
            striping_factor=int(_size(hints.get("striping_factor"), 0)),
            co_ratio=max(1, int(_size(hints.get("romio_lustre_co_ratio"), 1))),
            lustre=lustre,
        )

    @property
    def write_aggregators(self) -> int:
        """The aggregators of a collective write: cb_nodes, or on Lustre as its driver trims them."""
        if not (self.lustre and self.striping_unit > 0):
            return self.cb_nodes
        return min(lustre_aggregators(self.cb_nodes, self.striping_factor, self.co_ratio), self.cb_nodes)

    def for_direction(self, direction: str) -> Hints:
        """These hints with the other direction's at their defaults: a write's operations do not depend on
        romio_cb_read, romio_ds_read or ind_rd_buffer_size (nor a read's on the write ones), so settings
        that differ only there are counted once."""
        if direction == "write":
            return replace(self, cb_read="automatic", ds_read="automatic", ind_rd_buffer_size=4 * 1024 * 1024)
        return replace(self, cb_write="automatic", ds_write="automatic", ind_wr_buffer_size=512 * 1024)


# hints that cannot act given others: (the hint, the hints and values that together silence it)
INERT_WHEN = (
    # collective buffering off in both directions: no aggregator, no collective buffer
    ("cb_buffer_size", {"romio_cb_write": "disable", "romio_cb_read": "disable"}),
    ("cb_nodes", {"romio_cb_write": "disable", "romio_cb_read": "disable"}),
    ("cb_config_list", {"romio_cb_write": "disable", "romio_cb_read": "disable"}),
    # data sieving off: its buffer is never allocated
    ("ind_wr_buffer_size", {"romio_ds_write": "disable"}),
    ("ind_rd_buffer_size", {"romio_ds_read": "disable"}),
)


def inert(hints: dict) -> set[str]:
    """The hints of a setting ({hint: value}) that cannot change what ROMIO does, given the others: settings
    that differ only in them behave alike, so a search counts them as one point."""
    mode = {k: str(v).lower() for k, v in hints.items()}
    return {name for name, when in INERT_WHEN if all(mode.get(k) == v for k, v in when.items())}
