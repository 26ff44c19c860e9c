"""Search spaces: views of the knob catalogue.

A dimension sets one knob, or several at once (a joint dimension: H5Evolve
ties the stripe size to cb_buffer_size). Values are plain settings values, so
a point of a space is a flat {"layer.knob": value} dict that
`settings.from_flat` turns into a document.

Constraints between knobs are expressed once, in the catalogue: a knob's
`requires` names the knob it needs and the value template, e.g. cb_nodes
requires "mpiio.cb_config_list=*:{per_node}". `complete` adds the required
knob to a point, and `Constraint` reads the template back (how many
aggregators a cb_config_list allows) for the synthetic models and for
deduplication.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import catalogue, settings
from ..inputs import InputError, read_json
from ..mpiabi import _ompi_components, ompio_offered  # noqa: F401 - tests read them here


class SpaceError(ValueError):
    pass


@dataclass(frozen=True)
class Dimension:
    name: str
    # each a knob value (None: the knob left unset, as the baseline has it), or for joint
    # dimensions a {"layer.knob": value} dict
    values: tuple
    knob: str | None = None  # the knob of a single-knob dimension

    def label(self, value: Any) -> str:
        """Stable text for a value (Optuna stores categorical choices as primitives): a string as it is, so
        the study reads `enable`, not `"enable"`; anything else as JSON."""
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

    @property
    def labels(self) -> list[str]:
        return [self.label(v) for v in self.values]

    def value_of(self, label: str) -> Any:
        for v in self.values:
            if self.label(v) == label:
                return v
        raise SpaceError(f"dimension {self.name} has no value {label}")

    def settings_of(self, value: Any) -> dict[str, Any]:
        if self.knob is None:
            return dict(value)
        return {} if value is None else {self.knob: value}

    def label_setting(self, flat: Mapping[str, Any]) -> str | None:
        """The label of the first value whose settings `flat` all has (None: no such value; a value that sets
        nothing never matches)."""
        for v, label in zip(self.values, self.labels):
            wanted = self.settings_of(v)
            if wanted and all(k in flat and self.label(flat[k]) == self.label(x) for k, x in wanted.items()):
                return label
        return None

    def knobs(self) -> set[str]:
        if self.knob is not None:
            return {self.knob}
        return {k for v in self.values for k in v}

    def to_json(self) -> dict:
        if self.knob is not None:
            return {"knob": self.knob, "values": list(self.values)}
        return {"name": self.name, "values": [dict(v) for v in self.values]}


@dataclass
class SearchSpace:
    name: str
    dimensions: list[Dimension]
    description: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)

    def size(self) -> int:
        return math.prod(len(d.values) for d in self.dimensions)

    def dimension(self, name: str) -> Dimension:
        for d in self.dimensions:
            if d.name == name:
                return d
        raise SpaceError(f"space {self.name} has no dimension {name}")

    def point_settings(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """Flat settings of a point {dimension name: value}."""
        flat = dict(self.fixed)
        for d in self.dimensions:
            if d.name in point:
                flat.update(d.settings_of(point[d.name]))
        return flat

    def decode(self, params: Mapping[str, str]) -> dict[str, Any]:
        """Point from Optuna params {dimension name: label}."""
        return {name: self.dimension(name).value_of(label) for name, label in params.items()}

    def indices_of(self, flat: Mapping[str, Any]) -> tuple[int, ...] | None:
        """A measured point's value index per dimension, from its flat settings (None: not a point of this
        space). A value that leaves a knob alone (sets nothing) is not every value: the knobs it does not
        set must be absent from the point too."""
        row = []
        for d in self.dimensions:
            knobs = d.knobs()
            match = [
                i
                for i, v in enumerate(d.values)
                if all(k in flat and d.label(flat[k]) == d.label(x) for k, x in d.settings_of(v).items())
                and not any(k in flat for k in knobs - set(d.settings_of(v)))
            ]
            if not match:
                return None
            row.append(match[0])
        return tuple(row)

    def labels_of(self, flat: Mapping[str, Any]) -> dict[str, str] | None:
        """A measured point as {dimension name: value label} (None: not a point of this space)."""
        row = self.indices_of(flat)
        return None if row is None else {d.name: d.labels[i] for d, i in zip(self.dimensions, row)}

    def without_layers(self, unused: Mapping[str, str]) -> tuple[SearchSpace, list[str]]:
        """The space without the dimensions whose every knob is of a layer in `unused` ({layer: why}), and
        the names of those dimensions; the space itself when that would leave none (nothing to search)."""
        dropped = [d.name for d in self.dimensions if all(k.partition(".")[0] in unused for k in d.knobs())]
        if not dropped or len(dropped) == len(self.dimensions):
            return self, []
        kept = [d for d in self.dimensions if d.name not in dropped]
        fixed = {k: v for k, v in self.fixed.items() if k.partition(".")[0] not in unused}
        return SearchSpace(self.name, kept, self.description, fixed), dropped

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "dimensions": [d.to_json() for d in self.dimensions],
        }
        if self.fixed:
            out["fixed"] = self.fixed
        return out

    def validate(self) -> SearchSpace:
        """Every knob is catalogued (or an MPI-IO hint) and every value is one the runtime accepts."""
        if not self.dimensions:
            raise SpaceError(f"space {self.name} has no dimensions")
        names = [d.name for d in self.dimensions]
        if len(set(names)) != len(names):
            raise SpaceError(f"space {self.name} names a dimension twice")
        seen: dict[str, str] = {}
        for d in self.dimensions:
            if len(d.values) < 2:
                raise SpaceError(f"dimension {d.name} needs at least two values")
            if len(set(d.labels)) != len(d.values):
                raise SpaceError(f"dimension {d.name} has a value twice (or a string that reads like another value)")
            for k in d.knobs():
                if k in seen:
                    raise SpaceError(f"knob {k} is set by both {seen[k]} and {d.name}")
                seen[k] = d.name
                layer = k.partition(".")[0]
                if k not in catalogue.knobs() and layer != "mpiio":
                    raise SpaceError(f"dimension {d.name}: unknown knob '{k}'")
            for v in d.values:
                try:
                    settings.validate(settings.from_flat(d.settings_of(v)))
                except settings.SettingsError as e:
                    raise SpaceError(f"dimension {d.name}: value {json.dumps(v)} is not valid: {e}") from None
        if self.fixed:
            settings.validate(settings.from_flat(self.fixed))
        return self


LAYER_NAMES = {"hdf5": "HDF5", "pnetcdf": "PnetCDF", "mpiio": "MPI-IO", "ompio": "OMPIO"}


def unused_layers(report: Mapping[str, Any] | None) -> dict[str, str]:
    """The layers a run report shows the program never used, each with why: {"hdf5": "no HDF5 file was
    opened"}. Lustre is not judged here (its layouts say for themselves where they cannot apply). {} without
    a report, or with one that shows no file at all (nothing seen is no evidence)."""
    if not report or not report.get("phases"):
        return {}
    phases = report["phases"]
    kinds = {p.get("kind") for p in phases}
    mpiio = any(p.get("kind") in ("mpiio", "pnetcdf") or "mpi_hints" in p or p.get("driver") == "mpio" for p in phases)
    out = {}
    if "hdf5" not in kinds:
        out["hdf5"] = "no HDF5 file was opened"
    if "pnetcdf" not in kinds:
        out["pnetcdf"] = "no PnetCDF file was opened"
    if not mpiio:
        out["mpiio"] = out["ompio"] = "no file was opened through MPI-IO"
    else:
        component = (report.get("run") or {}).get("mpi_io_component")
        if component and component != "ompio":
            out["ompio"] = f"its MPI-IO files were opened by {component}, not OMPIO"
    return out


def library_default(key: str) -> Any:
    """The catalogue's documented default of a knob, as a settings value (None: the library decides)."""
    k = catalogue.knobs().get(key)
    return k.default_value() if k else None


# ---- built-in views ----

K, M = 1024, 1024 * 1024


def _dim(knob: str, values) -> Dimension:
    return Dimension(name=knob, values=tuple(values), knob=knob)


def _joint(name: str, values) -> Dimension:
    return Dimension(name=name, values=tuple(values))


# H5Evolve's chunk sizes: 25 values from 10 MB to 2 GB (paper 004); geometric steps (x1.25), whole MiB
H5EVOLVE_CHUNK_MIB = tuple(round(10 * (2048 / 10) ** (i / 24)) for i in range(25))


def h5evolve() -> SearchSpace:
    """The H5Evolve ranges (paper 004): 10 x 8 x 12 x 14 x 25 = 336,000 configurations (13,440 without
    chunking)."""
    return SearchSpace(
        name="h5evolve",
        description="H5Evolve (Behzad et al., SC'13): Lustre stripe count, stripe size tied to cb_buffer_size, "
        "cb_nodes, HDF5 alignment and chunk size, over the paper's ranges",
        dimensions=[
            _dim("lustre.stripe_count", (4, 8, 16, 24, 32, 48, 64, 96, 128, 156)),
            _joint(
                "stripe_and_cb_size",
                ({"lustre.stripe_size": s * M, "mpiio.cb_buffer_size": s * M} for s in (1, 2, 4, 8, 16, 32, 64, 128)),
            ),
            _dim("mpiio.cb_nodes", (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256)),
            _dim(
                "hdf5.alignment",
                (
                    [1, 1],
                    [1 * K, 64 * K],
                    [2 * K, 64 * K],
                    [4 * K, 256 * K],
                    [8 * K, 256 * K],
                    [8 * K, 1 * M],
                    [8 * K, 2 * M],
                    [16 * K, 2 * M],
                    [8 * K, 4 * M],
                    [16 * K, 4 * M],
                    [8 * K, 8 * M],
                    [16 * K, 8 * M],
                    [16 * K, 16 * M],
                    [16 * K, 32 * M],
                ),
            ),
            _dim("hdf5.chunk_bytes", tuple(m * M for m in H5EVOLVE_CHUNK_MIB)),
        ],
    )


def tunio() -> SearchSpace:
    """The 12 HDF5 / MPI-IO / Lustre parameters TunIO tunes (paper 002, section III-C)."""
    return SearchSpace(
        name="tunio",
        description="TunIO (Rajesh et al., IPDPS'24): sieve buffer, chunk cache, alignment, metadata block, "
        "collective metadata, metadata cache, striping hints, cb_nodes, cb_buffer_size",
        dimensions=[
            _dim("hdf5.sieve_buf_size", (64 * K, 256 * K, 1 * M, 4 * M, 16 * M)),
            _dim("hdf5.chunk_cache_nbytes", (1 * M, 4 * M, 16 * M, 64 * M)),
            _dim("hdf5.chunk_cache_nslots", (521, 10007, 100003)),
            _dim("hdf5.alignment", ([1, 1], [0, 64 * K], [0, 1 * M], [64 * K, 1 * M], [1 * M, 4 * M], [0, 16 * M])),
            _dim("hdf5.meta_block_size", (2 * K, 64 * K, 1 * M, 4 * M)),
            _dim("hdf5.coll_metadata_reads", (False, True)),
            _dim("hdf5.mdc_initial_size", (2 * M, 8 * M, 32 * M)),
            _dim("hdf5.coll_metadata_writes", (False, True)),
            _dim("mpiio.striping_factor", (1, 2, 4, 8, 16, 32, 64)),
            _dim("mpiio.striping_unit", (64 * K, 1 * M, 4 * M, 16 * M)),
            _dim("mpiio.cb_nodes", (1, 2, 4, 8, 16, 32)),
            _dim("mpiio.cb_buffer_size", (1 * M, 4 * M, 16 * M, 64 * M)),
        ],
    )


def romio() -> SearchSpace:
    """What matters on one node with ROMIO's ufs driver (see docs/machine.md)."""
    modes = ("automatic", "enable", "disable")
    return SearchSpace(
        name="romio",
        description="ROMIO on one node: collective buffering and data sieving, aggregators, cb_buffer_size, "
        "HDF5 transfer mode, alignment, collective metadata",
        dimensions=[
            _dim("mpiio.romio_cb_write", modes),
            _dim("mpiio.romio_cb_read", modes),
            _dim("mpiio.cb_nodes", (1, 2, 4)),  # with the cb_config_list the catalogue requires (`complete`)
            _dim("mpiio.romio_ds_write", modes),
            _dim("mpiio.romio_ds_read", modes),
            _dim("mpiio.cb_buffer_size", (1 * M, 4 * M, 16 * M, 64 * M)),
            _dim("hdf5.transfer_mode", ("independent", "collective")),
            _dim("hdf5.alignment", ([1, 1], [0, 64 * K], [0, 1 * M])),
            _joint(
                "collective_metadata",
                ({"hdf5.coll_metadata_reads": b, "hdf5.coll_metadata_writes": b} for b in (False, True)),
            ),
        ],
    )


def twophase() -> SearchSpace:
    """Isaila et al.'s space at one node's scale: aggregators x collective buffer, and whether ROMIO aggregates
    at all; every point is one the hybrid model predicts."""
    modes = ("automatic", "enable", "disable")
    return SearchSpace(
        name="twophase",
        description="ROMIO two-phase I/O (Isaila et al., Cluster'15): romio_cb_write/read, cb_nodes, cb_buffer_size",
        dimensions=[
            _dim("mpiio.romio_cb_write", modes),
            _dim("mpiio.romio_cb_read", modes),
            _dim("mpiio.cb_nodes", (1, 2)),
            _dim("mpiio.cb_buffer_size", (256 * K, 1 * M, 4 * M, 16 * M, 64 * M)),
        ],
    )


def bandio() -> SearchSpace:
    """The bandio target (kernels/README.md, docs/tuning.md): 2 ranks write and read back their
    noncontiguous column bands of a [65536, 32] float64 dataset from local arrays with a halo.
    Chunk shape (None: contiguous, the kernel's own), transfer mode, collective buffering and data
    sieving per direction, aggregators, and the HDF5 sieve buffer, which the MPI-IO driver never
    uses: 1,152 points."""
    modes = ("automatic", "enable", "disable")
    return SearchSpace(
        name="bandio",
        description="the bandio target: chunk shape, transfer mode, collective buffering and data sieving per "
        "direction, aggregators, HDF5 sieve buffer",
        dimensions=[
            # contiguous; one slab of one rank's band; the whole band; one slab of whole rows (both bands)
            _dim("hdf5.chunk_dims", (None, [8192, 16], [65536, 16], [8192, 32])),
            _dim("hdf5.transfer_mode", ("independent", "collective")),
            _dim("mpiio.romio_cb_write", modes),
            _dim("mpiio.romio_cb_read", modes),
            _dim("mpiio.romio_ds_write", ("automatic", "disable")),
            _dim("mpiio.romio_ds_read", ("automatic", "disable")),
            _dim("mpiio.cb_nodes", (1, 2)),  # with the cb_config_list the catalogue requires (`complete`)
            _dim("hdf5.sieve_buf_size", (64 * K, 1 * M)),
        ],
    )


def ompio() -> SearchSpace:
    """Open MPI's OMPIO on one node (its MCA parameters, process-wide: docs/settings.md): the collective
    component, aggregators and their buffer, with HDF5's transfer mode, which decides whether they matter."""
    return SearchSpace(
        name="ompio",
        description="Open MPI's OMPIO: fcoll component, aggregators, bytes per aggregator, cycle buffer, "
        "HDF5 transfer mode",
        dimensions=[
            _dim("ompio.fcoll", ompio_offered("fcoll", ("vulcan", "dynamic", "two_phase", "individual"))),
            _dim("ompio.num_aggregators", (1, 2)),
            _dim("ompio.bytes_per_agg", (1 * M, 4 * M, 32 * M)),
            _dim("ompio.cycle_buffer_size", (1 * M, 512 * M)),
            _dim("hdf5.transfer_mode", ("independent", "collective")),
        ],
    )


def pnetcdf() -> SearchSpace:
    """A PnetCDF application under Open MPI (Debian builds PnetCDF against it): PnetCDF's alignment and buffer
    hints, and OMPIO's collective component and aggregators, which carry PnetCDF's collective writes (e3smio's
    blocks of 16 columns write 1.7-1.9x faster with two_phase than with the default vulcan here)."""
    return SearchSpace(
        name="pnetcdf",
        description="PnetCDF under Open MPI: variable alignment, in-place swap, nonblocking buffer; OMPIO's fcoll "
        "component and aggregators",
        dimensions=[
            _dim("pnetcdf.nc_var_align_size", (None, 4 * K, 1 * M)),
            _dim("pnetcdf.nc_in_place_swap", ("auto", "enable", "disable")),
            _dim("pnetcdf.nc_ibuf_size", (1 * M, 16 * M)),
            _dim("ompio.fcoll", ompio_offered("fcoll", ("vulcan", "dynamic", "two_phase", "individual"))),
            _dim("ompio.num_aggregators", (1, 2)),
        ],
    )


BUILTIN = {
    "h5evolve": h5evolve,
    "tunio": tunio,
    "romio": romio,
    "twophase": twophase,
    "bandio": bandio,
    "ompio": ompio,
    "pnetcdf": pnetcdf,
}


def from_json(doc: Mapping[str, Any], source: str = "space") -> SearchSpace:
    """A user space: {"name", "dimensions": [{"knob": k, "values": [...]} | {"name": n, "values": [{k: v}]}]}."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("dimensions"), list):
        raise SpaceError(f'{source}: expected an object with a "dimensions" list')
    dims = []
    for i, d in enumerate(doc["dimensions"]):
        where = f"{source}: dimensions[{i}]"
        if not isinstance(d, Mapping) or not isinstance(d.get("values"), list):
            raise SpaceError(f'{where}: expected {{"knob": ..., "values": [...]}}')
        if "knob" in d:
            dims.append(_dim(str(d["knob"]), tuple(d["values"])))
        elif "name" in d:
            if not all(isinstance(v, Mapping) and v for v in d["values"]):
                raise SpaceError(f'{where}: a joint dimension\'s values are {{"layer.knob": value}} objects')
            dims.append(_joint(str(d["name"]), tuple(dict(v) for v in d["values"])))
        else:
            raise SpaceError(f'{where}: give "knob" (one knob) or "name" (several knobs per value)')
    fixed = doc.get("fixed", {})
    if not isinstance(fixed, Mapping):
        raise SpaceError(f'{source}: "fixed" must be an object of "layer.knob": value')
    return SearchSpace(
        name=str(doc.get("name", source)),
        dimensions=dims,
        description=str(doc.get("description", "")),
        fixed=dict(fixed),
    ).validate()


def load(spec: str) -> SearchSpace:
    """A built-in space by name, or a JSON file."""
    if spec in BUILTIN:
        return BUILTIN[spec]().validate()
    path = Path(spec)
    if not path.exists():
        raise SpaceError(f"unknown space '{spec}': use {', '.join(BUILTIN)} or a JSON file")
    try:
        doc = read_json(path, "a search space (JSON)")
    except InputError as e:  # a PNG, a FIFO, not JSON: one line naming the file
        raise SpaceError(str(e)) from None
    return from_json(doc, str(path))
