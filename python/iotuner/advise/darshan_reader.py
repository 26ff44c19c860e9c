"""Reads a Darshan log with PyDarshan and prints the facts `iotuner advise`
needs as JSON. It runs in a child process (see darshan_log.py): the C library
under PyDarshan (libdarshan-util) prints its complaints about a damaged log
on stderr and may crash on one, and neither must reach the user as a
traceback.

Output: {"job", "exe", "mounts", "names", "modules", "records": {module:
[{"id", "rank", "counters", "fcounters"}]} (a PNETCDF_VAR record also its file's
"file_rec_id"), "dxt": {"POSIX"|"MPIIO": [{"id",
"rank", "hostname", "write": summary, "read": summary}]}} with only the
non-zero counters. A DXT segment list becomes a summary (count, bytes,
median size, locality as smart mode classifies it, extent, busy time, first
start, last end), so a large trace never crosses the pipe.
"""

from __future__ import annotations

import json
import sys

from .. import native

COUNTER_MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "LUSTRE")
DXT_MODULES = {"DXT_POSIX": "POSIX", "DXT_MPIIO": "MPIIO"}


def _value(v, real: bool):
    if hasattr(v, "tolist"):  # numpy scalars and arrays (LUSTRE_OST_IDS)
        v = v.tolist()
    if isinstance(v, list):
        return [int(x) for x in v]
    if isinstance(v, str) or v is None:
        return v
    if v != v:  # NaN (an empty pool name)
        return None
    return float(v) if real else int(v)


def _records(report, module: str) -> list[dict]:
    frames = report.records[module].to_df()
    out: dict[tuple[int, int], dict] = {}
    for kind, df in frames.items():  # counters, fcounters (LUSTRE: components too)
        if df is None or len(df) == 0:
            continue
        cols = [c for c in df.columns if c not in ("id", "rank")]
        for row in df.itertuples(index=False):
            d = row._asdict()
            key = (int(d["id"]), int(d["rank"]))
            rec = out.setdefault(key, {"id": str(key[0]), "rank": key[1]})
            vals = {c: v for c in cols if (v := _value(d[c], kind == "fcounters")) not in (0, "", None, [])}
            if kind == "components":
                rec.setdefault("components", []).append(vals)
            else:
                rec.setdefault(kind, {}).update(vals)
    records = report.records[module]
    for i in range(len(records)):  # a variable's file (PNETCDF_VAR, H5D): not in the frames
        try:
            raw = records[i]
            key, file_id = (int(raw["id"]), int(raw["rank"])), raw["file_rec_id"]
        except KeyError:
            break  # a module without it
        if key in out:
            out[key]["file_rec_id"] = str(int(file_id))
    return list(out.values())


def _segments(df) -> dict | None:
    if df is None or len(df) == 0:
        return None

    offsets = df["offset"].astype("int64").tolist()
    lengths = df["length"].astype("int64").tolist()
    locality, extent = native.core().locality(offsets, lengths)
    busy = (df["end_time"] - df["start_time"]).clip(lower=0)
    return {
        "count": len(lengths),
        "bytes": int(sum(lengths)),
        "median_size": int(df["length"].median()),
        "max_size": int(max(lengths)),
        "locality": locality,
        "extent": int(extent),
        "busy_s": float(busy.sum()),
        "start_s": float(df["start_time"].min()),
        "end_s": float(df["end_time"].max()),
    }


def _dxt(report, module: str) -> list[dict]:
    out = []
    for rec in report.records[module].to_df():
        out.append(
            {
                "id": str(rec["id"]),
                "rank": int(rec["rank"]),
                "hostname": rec.get("hostname") or "",
                "write": _segments(rec.get("write_segments")),
                "read": _segments(rec.get("read_segments")),
            }
        )
    return out


def read(path: str) -> dict:
    import darshan

    report = darshan.DarshanReport(path, read_all=False)
    meta = report.metadata
    facts = {
        "job": {k: v for k, v in meta.get("job", {}).items() if k != "metadata"},
        "job_metadata": meta.get("job", {}).get("metadata", {}),
        "exe": meta.get("exe", ""),
        "mounts": [list(m) for m in getattr(report, "mounts", [])],
        "modules": {
            k: {"ver": v.get("ver"), "partial": bool(v.get("partial_flag")), "records": v.get("num_records")}
            for k, v in report.modules.items()
        },
        "darshan_library": __import__("darshan.backend.cffi_backend", fromlist=["x"]).get_lib_version(),
        "records": {},
        "dxt": {},
    }
    for module in COUNTER_MODULES:
        if module in report.modules:
            if module == "LUSTRE":
                report.mod_read_all_lustre_records()
            else:
                report.mod_read_all_records(module)
            facts["records"][module] = _records(report, module)
    for module, short in DXT_MODULES.items():
        if module in report.modules:
            report.mod_read_all_dxt_records(module)
            facts["dxt"][short] = _dxt(report, module)
    facts["names"] = {str(k): v for k, v in report.name_records.items()}
    return facts


def main(argv: list[str]) -> int:
    try:
        facts = read(argv[0])
    except Exception as e:  # noqa: BLE001 - the parent turns this line into its error message
        print(f"iotuner-darshan-reader: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    json.dump(facts, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
