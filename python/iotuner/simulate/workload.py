"""The phases to simulate, from a run report or a Darshan log, at the simulated rank count.

A report's `access` section describes each rank's collective calls exactly when they are regular
(docs/report.md, Access patterns). At another rank count N the pattern is replayed by weak scaling, each rank
keeping its bytes:
- rank r starts d bytes after rank r-1, d measured between ranks 0 and 1 (one rank measured: d is its
  extent, each rank a region of its own);
- a distance that spans every rank's piece of a row (the stride between a rank's requests, or between its
  calls: at least ranks x d) grows by d per added rank, keeping any hole: interleaved, strided and
  segmented (IOR, one dataset per call) layouts stay interleaved, strided and segmented; distances inside a
  rank's own region stay as they are;
- every rank has rank 0's shape; calls without an exact shape (sizes or spacing that differ, views not
  flattened) are rebuilt as each rank's average call, one region per rank in each call, in rank order.
A report's phase without collective calls among its ranks has no access pattern (the runtime records one
for collective calls only) and is rebuilt from its counters as a Darshan log's file is (below), at MPI-IO when
its calls went through it, else at POSIX, with the average call size (a report has no size histogram): a shared
file as independent calls, several ranks' files of one name as a file per process (their exact shape when
each rank made collective calls on its own communicator), one rank's file as a single writer. HDF5's
independent transfers to a shared file are each dataset call's pieces interleaved across the ranks, as the
hybrid model rebuilds them (pattern.hdf5_independent), and collective calls under hdf5.transfer_mode collective.
A Darshan log has no offsets: each file is rebuilt from its counters (bytes and calls per rank, the most
common access size), weakly scaled the same way:
- collective MPI-IO calls: one region per rank in each call, in rank order (the segmented layout of VPIC-IO,
  one dataset per call), or interleaved in pieces of the common size when a DXT trace calls the access strided;
- independent MPI-IO or POSIX calls to a shared file: each rank's bytes one region in rank order (IOR's
  segmented N-1 layout), or interleaved likewise; ROMIO's independent path whatever the hints;
- files of one process each: several alike are a file per process (every simulated rank its own file, which
  Lustre starts on the OSTs after the previous rank's); one alone is a single writer, rank 0.
Independent calls are counted at MPI-IO for a file opened through it (its POSIX calls include ROMIO's own),
else at POSIX; files that move less than 1% of the data are left out, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import run_report
from ..advise.profile import Direction
from ..perfmodel.pattern import Pattern, exact_shape, hdf5_independent, rank_patterns, requests_of


class WorkloadError(ValueError):
    """Input that has nothing to simulate, or that cannot be read."""


@dataclass
class Phase:
    label: str
    pattern: Pattern
    app_hints: dict  # the MPI-IO hints the application gave itself
    run_settings: dict  # what the measured run applied on top: {"layer.knob": requested}
    new_file: bool
    file_size: int  # the file's size when the phase starts (reads: where their data is)
    measured_s: float | None = None  # the run's own time of this direction (the same rank count only)
    exact: bool = True
    collective: bool = True  # False: independent MPI-IO or POSIX calls (no collective buffering)
    per_process: bool = False  # every rank its own file (each pattern's offsets are in its rank's file)
    transfer: bool = False  # HDF5's independent transfers: collective calls under hdf5.transfer_mode

    def collective_under(self, flat: dict) -> bool:
        """Whether the phase's calls are collective under settings {"layer.knob": value}."""
        return self.collective or (self.transfer and flat.get("hdf5.transfer_mode") == "collective")


@dataclass
class Workload:
    source: str
    measured_ranks: int
    ranks: int
    phases: list[Phase]
    notes: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(p.pattern.bytes for p in self.phases)


def _extent(d: dict) -> int:
    if d.get("offset") is None:  # offsets unknown (views not flattened): the rank's bytes
        return max(1, d["bytes"])
    return max(1, (d.get("end") or d["offset"] + d["bytes"]) - d["offset"])


def regular(d: dict) -> tuple[dict, bool]:
    """(summary, changed): a rank whose calls are each one request of the same size, but not evenly spaced
    (HDF5 metadata between the datasets of VPIC-IO's calls), as evenly spaced calls: the average step."""
    calls, size = d.get("calls") or 0, d.get("call_bytes")
    if (
        d.get("call_step") is not None
        or calls < 2
        or not size
        or d.get("call_requests") != 1
        or d.get("offset") is None
        or d.get("end") is None
    ):
        return d, False
    step = round((d["end"] - d["offset"] - size) / (calls - 1))
    return dict(d, call_step=step, request_min=size, request_max=size, request_stride=0), True


# requests a scaled phase may have (all ranks, all calls); beyond, each rank's pieces are merged g at a time.
# 65,536: bandio's 67 million pieces at 1,024 ranks merged to this simulate in 53 s for four documents
REQUEST_BUDGET = 1 << 16


def _divisor(x: int, want: int) -> int:
    """The smallest divisor of x that is at least want (x itself if none)."""
    return next((g for g in range(max(1, want), x) if x % g == 0), x)


def coarsen(first: dict, d: int, measured: int, n: int) -> tuple[dict, int]:
    """(summary, d) with each rank's requests merged g at a time when n ranks would make more than
    REQUEST_BUDGET of them (the hybrid model's counting and the engine take time and memory per request:
    1,024 ranks of 8,192 pieces of 128 B in 8 calls are 67 million). Pieces inside a call merge g to one, g
    times as long and as far apart; pieces that interleave with the other ranks' (the stride spans every
    rank's piece, d the distance between ranks) also move each rank g times further on, so no two overlap
    and each rank keeps its bytes. Then, one piece per call, g calls merge to one. `coarsened` says g."""
    calls, nreq = first.get("calls") or 0, first.get("call_requests") or 0
    size, stride, step = first.get("request_min"), first.get("request_stride"), first.get("call_step")
    if not exact_shape(first) or not calls or n * calls * nreq <= REQUEST_BUDGET:
        return first, d
    want, g_all, out = -(-n * calls * nreq // REQUEST_BUDGET), 1, dict(first)
    if nreq > 1 and stride:
        g = _divisor(nreq, want)
        d = d * g if stride >= measured * d else d
        nreq, size, stride, g_all, want = nreq // g, size * g, stride * g, g, -(-want // g)
    if want > 1 and nreq == 1 and calls > 1 and step and (step == size or step >= measured * d):
        g = _divisor(calls, want)
        d = d * g if step != size else d
        calls, size, step, g_all = calls // g, size * g, step * g, g_all * g
    out.update(
        calls=calls,
        call_requests=nreq,
        request_min=size,
        request_max=size,
        request_stride=stride,
        call_step=step,
        call_bytes=nreq * size,
        coarsened=g_all,
    )
    return out, d


def merged(summaries: list[dict]) -> str:
    g, s = summaries[0]["coarsened"], summaries[0]
    return (
        f"{len(summaries) * s['calls'] * s['call_requests'] * g:,} requests at this scale, more than the "
        f"simulator takes ({REQUEST_BUDGET:,}): each rank's pieces merged {g} to one, their bytes and "
        f"interleaving kept (collective buffering's rounds and messages barely change; without it, larger "
        f"pieces than the application's make the prediction optimistic)"
    )


def scale(first: dict, second: dict | None, measured: int, n: int) -> list[dict]:
    """Per-rank summaries at n ranks from rank 0's and rank 1's at `measured` ranks (module doc), coarsened
    where they would have too many requests (coarsen)."""
    d = (
        (second["offset"] - first["offset"])
        if second and second.get("offset") is not None and first.get("offset") is not None
        else _extent(first)
    )
    if d <= 0:
        d = _extent(first)
    first, d = coarsen(first, d, measured, n)

    def row(x):  # a distance spanning every rank's piece grows with the ranks
        return x + (n - measured) * d if x and x >= measured * d else x

    stride, step, nreq = first.get("request_stride"), first.get("call_step"), first.get("call_requests")
    new_stride = row(stride) if stride else stride
    if nreq and nreq > 1 and stride and step and step >= stride and step % stride == 0:
        new_step = step // stride * new_stride
    else:
        new_step = row(step) if step else step
    out = []
    base = first.get("offset") or 0
    for r in range(n):
        s = dict(first)
        s["offset"] = base + r * d
        s["end"] = s["offset"] + _extent(first)  # read by the approximate rebuild only
        s["request_stride"], s["call_step"] = new_stride, new_step
        out.append(s)
    return out


def _pattern(direction: str, summaries: list[dict | None]) -> Pattern:
    """None: a rank without calls in this direction."""
    return Pattern(direction, rank_patterns(summaries))


def _scaled(direction: str, first: dict, second: dict | None, measured: int, n: int) -> tuple[Pattern, str]:
    """The pattern at n ranks (scale), and what merging its pieces changed ("" when nothing)."""
    summaries = scale(first, second, measured, n)
    return _pattern(direction, summaries), merged(summaries) if summaries[0].get("coarsened", 1) > 1 else ""


def _also(note: str) -> str:
    return f"; {note}" if note else ""


def segmented(direction: str, calls: int, per_call: int, ranks: int) -> Pattern:
    """`calls` collective calls of `per_call` bytes per rank, each call one region per rank in rank order
    (one dataset per call: VPIC-IO's layout), at `ranks` ranks."""
    summary = {
        "calls": calls,
        "bytes": per_call * calls,
        "offset": 0,
        "request_min": per_call,
        "request_max": per_call,
        "call_requests": 1,
        "request_stride": 0,
        "call_step": ranks * per_call if calls > 1 else 0,
        "unflattened_calls": 0,
    }
    return _pattern(direction, scale(summary, dict(summary, offset=per_call), ranks, ranks))


def _end(p: Pattern) -> int:
    return max([0] + [c[-1][0] + c[-1][1] for r in p.ranks for c in r.calls if c])


def _hints(phase: dict) -> tuple[dict, dict]:
    """(the MPI-IO hints the application gave itself, what the run applied on top: {"layer.knob": requested})."""
    app = {
        k.split(".", 1)[1]: str(v)
        for k, v in (phase.get("application_settings") or {}).items()
        if k.startswith("mpiio.")
    }
    run = {
        f"{c['layer']}.{c['knob']}": c["requested"]
        for c in phase.get("settings", [])
        if c.get("status") in ("applied", "changed") and c["layer"] in ("mpiio", "lustre") and not c.get("dataset")
    }
    return app, run


def _moved(phase: dict) -> int:
    return int(phase.get("bytes_written") or 0) + int(phase.get("bytes_read") or 0)


def from_report(rep, ranks: int | None, source: str = "the report") -> Workload:
    """A run report's data phases at `ranks` (None: as measured): collective MPI-IO calls from the access
    section; the other phases from their counters (module doc)."""
    out, notes = [], []
    measured_ranks = int((rep.data.get("run") or {}).get("ranks") or 1)
    sizes: dict[str, int] = {}
    entries = {e["phase"]: e for e in rep.data.get("access", [])}
    total = sum(_moved(ph) for ph in rep.phases)
    minor = 0
    for i, phase in enumerate(rep.phases):
        listed = rep.access(i)
        if not listed and not _moved(phase):
            continue
        if not listed and _moved(phase) < MINOR_SHARE * total:
            minor += 1
            continue
        app, run = _hints(phase)
        for direction in ("write", "read"):
            got = _collective_phase(i, phase, listed, entries[i], direction, ranks, notes) if listed else None
            if got is None:  # no collective calls in this direction (the other may have had some)
                got = _counted_phase(
                    i, phase, entries.get(i), direction, ranks or measured_ranks, ranks in (None, measured_ranks), notes
                )
            if got is None:
                continue
            pat, timing, kind = got
            writing = direction == "write"
            created = bool(phase.get("created"))
            key = phase.get("identity") if kind.get("per_process") else phase["file"]
            end = _end(pat)
            start = (0 if created else end) if writing else max(sizes.get(key, 0), end)
            sizes[key] = max(sizes.get(key, 0), end)
            out.append(
                Phase(
                    f"phase {i} {direction}",
                    pat,
                    app,
                    run,
                    created and writing,
                    start,
                    timing,
                    **{"exact": pat.exact, **kind},
                )
            )
        if listed:
            measured_ranks = max(measured_ranks, int(entries[i].get("ranks_total", len(listed))))
    if minor:
        notes.append(
            f"{minor} phase(s) without collective calls moving less than {MINOR_SHARE:.0%} of the data left out"
        )
    if (rep.data.get("run") or {}).get("mpi_io_component") == "ompio":
        notes.append(
            "the run's MPI-IO was Open MPI's OMPIO, whose collective I/O differs from ROMIO's: the "
            "simulation counts ROMIO's operations (what the run would do with romio321)"
        )
    if not out:
        raise WorkloadError(f"{source} has no phase that moved data: nothing to simulate")
    return Workload(source, measured_ranks, ranks or measured_ranks, out, notes)


def _collective_phase(
    i: int, phase: dict, listed: list[dict], entry: dict, direction: str, ranks: int | None, notes: list[str]
) -> tuple[Pattern, float | None, dict] | None:
    """A phase's collective calls in one direction from its access section, at `ranks` (None: as measured):
    (pattern, the run's own time when at its rank count, {}); None: no calls in this direction."""
    summaries = [e.get(direction) for e in listed]
    if not any(summaries):
        return None
    total = int(entry.get("ranks_total", len(listed)))
    n = ranks or total
    many = sum(requests_of(d) for d in summaries) > REQUEST_BUDGET
    if n == total and len(listed) == total and not (many and summaries[0] and exact_shape(summaries[0])):
        pat = _pattern(direction, summaries)
    else:  # another scale, or too many requests at this one: rank 0's shape, scaled (and merged)
        if not summaries[0]:
            raise WorkloadError(
                f"phase {i}: rank 0 made no collective {direction} calls; cannot scale the pattern to {n} ranks"
            )
        first, averaged = regular(summaries[0])
        second = regular(summaries[1])[0] if len(summaries) > 1 and summaries[1] else None
        pat, how = _scaled(direction, first, second, total, n)
        if how:
            notes.append(f"phase {i} {direction}: {how}")
        if averaged:
            notes.append(
                f"phase {i} {direction}: calls not evenly spaced (metadata between them?); "
                f"scaled with their average step"
            )
    rebuilt = "rebuilt as each rank's average call, one region per rank in each call, in rank order"
    if any(s and s.get("unflattened_calls") for s in summaries):
        notes.append(
            f"phase {i} {direction}: calls through views iotuner does not flatten (darray "
            f"filetypes, or more than 65,536 pieces): offsets unknown, {rebuilt}"
        )
    elif not pat.exact:
        notes.append(f"phase {i} {direction}: irregular calls (their sizes or spacing differ), {rebuilt}")
    return pat, (phase.get("mpiio") or {}).get(f"{direction}_time_s") if n == total else None, {}


def _level(phase: dict, direction: str) -> tuple[str, dict]:
    """Where a phase's calls in one direction are counted: at MPI-IO when they went through it (HDF5's and
    PnetCDF's too), else at POSIX."""
    mpiio = phase.get("mpiio") or {}
    return ("mpiio", mpiio) if mpiio.get(f"{direction}_calls") else ("posix", phase.get("posix") or {})


def _counted_phase(
    i: int, phase: dict, entry: dict | None, direction: str, n: int, as_measured: bool, notes: list[str]
) -> tuple[Pattern, float | None, dict] | None:
    """A phase without collective calls among its ranks, in one direction, at n ranks from its counters:
    independent calls to a shared file, a file per process (collective calls on a rank's own communicator
    keep their exact shape), or one process's file. None: nothing moved in this direction."""

    level, counts = _level(phase, direction)
    word = "written" if direction == "write" else "read"
    facts = Direction(ops=int(counts.get(f"{direction}_calls") or 0), bytes=int(counts.get(f"bytes_{word}") or 0))
    if not facts.bytes or not int(phase.get(f"bytes_{word}") or 0):
        return None
    n0, files = int(phase.get("ranks") or 1), int(phase.get("files") or 1)
    own = [e.get(direction) for e in (entry or {}).get("ranks", [])]
    source, exact, transfer = f"rebuilt from the report's {level} counters", False, False
    as_collective = hdf5_independent(phase, direction)
    if as_collective:  # HDF5's independent transfers: each dataset call's pieces, interleaved across the ranks
        first = as_collective[0]
        pat, how = _scaled(direction, first, as_collective[1], n0, n)
        how = (
            f"HDF5's independent transfers, {first['calls']} dataset call(s) a rank of {first['call_requests']:,} "
            f"piece(s) of {first['request_min']:,} B interleaved across the ranks, an MPI-IO call each (collective "
            f"calls under hdf5.transfer_mode collective){_also(how)}"
        )
        transfer = True
    elif n0 > 1 and files > 1 and own and own[0] and exact_shape(own[0]):
        first, _ = coarsen(own[0], _extent(own[0]), n, n)
        pat, how = (
            _pattern(direction, [first] * n),
            f"rank 0's collective calls on its own communicator, exact ({first['calls']} call(s))",
        )
        source, exact = "from the access section", True
    elif n0 > 1 and files > 1:
        pat, how = _own(facts, n0, n, direction, True)
    elif n0 > 1:
        pat, how = _independent(facts, n0, n, direction)
        how += " (independent calls: collective buffering does not apply)"
    else:
        pat, how = _own(facts, 1, n, direction, False)
        how += " by one process (rank 0), the others idle"
    where = " per rank, each rank its own file" if n0 > 1 and files > 1 else ""
    notes.append(f"phase {i} {direction}: {how}{where}, {source}")
    timing = counts.get(f"{direction}_time_s") if as_measured else None
    return pat, timing, {"collective": False, "per_process": n0 > 1 and files > 1, "exact": exact, "transfer": transfer}


# a Darshan log's files that move less than this share of its data (logs, timings, inputs) are left out
MINOR_SHARE = 0.01


def _striping(f) -> dict:
    if f.lustre and f.lustre.get("stripe_count"):
        return {"lustre.stripe_count": f.lustre["stripe_count"], "lustre.stripe_size": f.lustre["stripe_size"]}
    return {}


def _facts(f, direction: str):
    """A file's direction: at MPI-IO (or above) when the file was opened through it (its POSIX calls there
    include ROMIO's own, such as data sieving's reads), else at POSIX."""
    if "mpiio" in f.interfaces or not (f.posix_write or f.posix_read):
        return f.write if direction == "write" else f.read
    return (f.posix_write if direction == "write" else f.posix_read) or (f.write if direction == "write" else f.read)


def _calls(facts, ranks: int) -> tuple[int, int, int]:
    """(calls, bytes per call, piece) per rank of a direction spread evenly over `ranks` ranks."""
    per_rank = facts.bytes // ranks
    k = max(1, round(facts.ops / ranks)) if facts.ops else 1
    per_call = max(1, per_rank // k)
    return k, per_call, min(facts.common_size or per_call, per_call)


def _collective(f, direction: str, n: int) -> tuple[Pattern, str]:
    """A shared file's collective calls (module doc), from its highest interface's counters."""
    facts = f.write if direction == "write" else f.read
    n0 = f.ranks
    k = max(1, round((f.collective_writes if direction == "write" else f.collective_reads) / n0))
    per_call = max(1, facts.bytes // n0 // k)
    piece = min(facts.common_size or per_call, per_call)
    if facts.locality == "strided" and piece < per_call:
        nreq = max(1, per_call // piece)
        summary = {
            "calls": k,
            "bytes": nreq * piece * k,
            "offset": 0,
            "request_min": piece,
            "request_max": piece,
            "call_requests": nreq,
            "request_stride": n0 * piece,
            "call_step": nreq * n0 * piece,
            "unflattened_calls": 0,
        }
        pat, how = _scaled(direction, summary, dict(summary, offset=piece), n0, n)
        return pat, (
            f"{k} collective call(s) of {per_call:,} B per rank, interleaved in {piece:,} B pieces "
            f"(DXT: strided){_also(how)}"
        )
    return (
        segmented(direction, k, per_call, n),
        f"{k} collective call(s) of {per_call:,} B per rank, one region per rank in each call, in rank order",
    )


def _independent(facts, n0: int, n: int, direction: str) -> tuple[Pattern, str]:
    """A shared file's independent calls (MPI-IO or POSIX), each one piece: interleaved in the common size
    when a DXT trace calls the access strided, else each rank's bytes one region in rank order (IOR's and
    most N-1 codes' layout)."""
    k, per_call, piece = _calls(facts, n0)
    if facts.locality == "strided" and piece < per_call * k:
        k = max(1, facts.bytes // n0 // piece)
        summary = {
            "calls": k,
            "bytes": k * piece,
            "offset": 0,
            "request_min": piece,
            "request_max": piece,
            "call_requests": 1,
            "request_stride": 0,
            "call_step": n0 * piece,
            "unflattened_calls": 0,
        }
        pat, how = _scaled(direction, summary, dict(summary, offset=piece), n0, n)
        return pat, f"{k} independent call(s) of {piece:,} B per rank, interleaved (DXT: strided){_also(how)}"
    summary = {
        "calls": k,
        "bytes": k * per_call,
        "offset": 0,
        "request_min": per_call,
        "request_max": per_call,
        "call_requests": 1,
        "request_stride": 0,
        "call_step": per_call,
        "unflattened_calls": 0,
    }
    pat, how = _scaled(direction, summary, dict(summary, offset=k * per_call), n0, n)
    return pat, f"{k} independent call(s) of {per_call:,} B per rank, each rank's one region, in rank order{_also(how)}"


def _own(facts, n0: int, n: int, direction: str, every_rank: bool) -> tuple[Pattern, str]:
    """Files of one process each: every rank (or rank 0 alone) writes its own file from offset 0."""
    k, per_call, _ = _calls(facts, n0)
    summary = {
        "calls": k,
        "bytes": k * per_call,
        "offset": 0,
        "request_min": per_call,
        "request_max": per_call,
        "call_requests": 1,
        "request_stride": 0,
        "call_step": per_call,
        "unflattened_calls": 0,
    }
    writers = n if every_rank else 1
    summary, _ = coarsen(summary, k * per_call, writers, writers)
    how = f"{k} call(s) of {per_call:,} B"
    if summary.get("coarsened", 1) > 1:
        how += (
            f" ({summary['calls']} of {summary['request_min']:,} B simulated: {k * writers:,} calls are more "
            f"than the simulator takes)"
        )
    return _pattern(direction, [summary] * n if every_rank else [summary] + [None] * (n - 1)), how


def from_darshan(profile, ranks: int | None) -> Workload:
    """A Darshan log's data files at `ranks` (module doc): shared files with collective MPI-IO calls, shared
    files with independent MPI-IO or POSIX calls, and files that one process each accessed (several alike: a
    file per process; one: a single writer)."""
    out, notes = [], []
    moved = {id(f): sum(_facts(f, d).bytes for d in ("write", "read")) for f in profile.data_files()}
    files = [f for f in profile.data_files() if moved[id(f)] and f.ranks >= 1]
    total = sum(moved[id(f)] for f in files)
    n_job = profile.job.processes
    shared = [f for f in files if f.shared or f.ranks > 1]
    alone = [f for f in files if not (f.shared or f.ranks > 1)]
    if len(alone) == 1 or n_job < 2:  # a single writer's file, or a serial job's files: each on its own
        shared, alone = shared + alone, []
    minor = [f for f in shared if moved[id(f)] < MINOR_SHARE * total]
    if alone and sum(moved[id(f)] for f in alone) < MINOR_SHARE * total:
        minor, alone = minor + alone, []
    if minor:
        notes.append(f"{len(minor)} file(s) moving less than {MINOR_SHARE:.0%} of the data left out")
    left_out = {id(f) for f in minor}
    for f in shared:
        if id(f) in left_out:
            continue
        coll = {"write": f.collective_writes, "read": f.collective_reads}
        for direction in ("write", "read"):
            facts = _facts(f, direction)
            if not facts.bytes:
                continue
            n = ranks or f.ranks
            if coll[direction]:
                pat, how = _collective(f, direction, n)
                kind = {}
            elif f.shared or f.ranks > 1:
                pat, how = _independent(facts, f.ranks, n, direction)
                how += " (independent calls: collective buffering does not apply)"
                kind = {"collective": False}
            else:
                pat, how = _own(facts, 1, n, direction, False)
                how += " by one process (rank 0), the others idle"
                kind = {"collective": False}
            out.append(
                Phase(
                    f"{f.path} {direction}",
                    pat,
                    {},
                    _striping(f),
                    direction == "write",
                    0 if direction == "write" else _end(pat),
                    None,
                    False,
                    **kind,
                )
            )
            notes.append(f"{f.path} {direction}: {how}, rebuilt from Darshan's counters")
    for direction in ("write", "read"):  # files of one process each, several alike: a file per process
        group = [f for f in alone if _facts(f, direction).bytes]
        if not group:
            continue
        facts = _sum_directions([_facts(f, direction) for f in group])
        n = ranks or n_job
        pat, how = _own(facts, len(group), n, direction, True)
        label = f"{len(group)} files, one per process ({group[0].path}, ...)"
        out.append(
            Phase(
                f"{label} {direction}",
                pat,
                {},
                _striping(group[0]),
                direction == "write",
                0 if direction == "write" else _end(pat),
                None,
                False,
                collective=False,
                per_process=True,
            )
        )
        notes.append(f"{label} {direction}: {how} per rank, each rank its own file, rebuilt from Darshan's counters")
    if not out:
        raise WorkloadError(
            f"{profile.job.input}: no file with MPI-IO or POSIX data in this Darshan log "
            "(STDIO only, or no data moved): nothing to simulate"
        )
    return Workload(profile.job.input, n_job, ranks or n_job, out, notes)


def _sum_directions(parts: list):
    """Several files' one direction as one: their calls and bytes, the most common size among theirs."""

    sizes = [p.common_size for p in parts if p.common_size]
    return Direction(
        ops=sum(p.ops for p in parts),
        bytes=sum(p.bytes for p in parts),
        common_size=max(set(sizes), key=sizes.count) if sizes else None,
    )


def load(path: str, ranks: int | None) -> Workload:
    """A run report (JSON) or a Darshan log, by its content."""
    from pathlib import Path

    from ..advise import darshan_log

    p = Path(path)
    if darshan_log.looks_like_darshan(p):
        from ..advise import from_darshan as fd
        from ..advise.errors import InputError

        try:
            profile = fd.build(darshan_log.read(p), str(p))
        except InputError as e:
            raise WorkloadError(str(e)) from None
        return from_darshan(profile, ranks)

    try:
        rep = run_report.load(p)
    except run_report.ReportError as e:
        raise WorkloadError(str(e)) from None
    return from_report(rep, ranks, str(p))
