"""Chunk shapes from a run report's datasets (phases[].datasets): a contiguous HDF5 dataset that each rank
writes in boxes that are not contiguous in the file (a band of columns: one small piece per row) is better
chunked like the box. Each write then fills whole chunks, one contiguous piece each, where the contiguous
layout cut it into one piece per row for every layer below (bandio's column bands: 8 writes of 32,768 rows
each, 128-byte pieces; chunked like the band, 2.5x faster here, docs/results.md). H5Tuner tunes chunk sizes
by search; this reads the shape off one run.

Only for small pieces: chunked like their boxes, vorpalio's 2 KiB pieces were 3x slower and gcrmio's 160 KiB
ones 5x (measured interleaved, 6 samples each; parallel HDF5 allocates a chunked dataset's chunks when it is
created and writes their fill values, which the contiguous layout does not; not measured apart). The limit
lies between the measured points, not at a measured crossover.

A finding per dataset, with the settings group that applies it (a `dataset` group: chunk_dims is a
dataset-creation knob), and the reasons a dataset was left alone.
"""

from __future__ import annotations

import math
from pathlib import Path

MIN_CHUNK = 64 * 1024  # smaller chunks cost more in HDF5's chunk index and cache than their pieces save
MAX_CHUNK = 4 * 1024**3 - 1  # HDF5's largest chunk
MAX_RANK = 32
MAX_PIECE = 1024  # bytes: pieces up to 128 B gained, 2 KiB and above lost (above)


def _dims(v) -> list[int] | None:
    if not isinstance(v, list) or not 0 < len(v) <= MAX_RANK:
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
        return None
    return v


def datasets(phase: dict) -> list[dict]:
    """A phase's well-formed dataset entries (a damaged entry is left out)."""
    out = []
    raw = phase.get("datasets")
    for d in raw if isinstance(raw, list) else []:
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            continue
        dims, block = _dims(d.get("dims")), _dims(d.get("first_write_block"))
        size = d.get("element_size")
        if dims is None or not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            continue
        if block is not None and len(block) != len(dims):
            block = None
        out.append({"name": d["name"], "dims": dims, "element_size": size, "layout": d.get("layout"), "block": block})
    return out


def pieces(dims: list[int], block: list[int]) -> int:
    """How many contiguous pieces of the file a box of a row-major contiguous dataset is."""
    # the dimensions from the last one the box does not span whole (inclusive) to the end make one piece
    cut = max((i for i in range(len(dims)) if block[i] < dims[i]), default=-1)
    return math.prod(block[:cut]) if cut > 0 else 1


def chunk_advice(ds: dict) -> tuple[list[int] | None, str]:
    """(chunk dims, why) for one dataset entry; None and why not."""
    block = ds["block"]
    if ds["layout"] != "contiguous":
        return None, f"its layout is {ds['layout']} (the advice is for contiguous datasets)"
    if block is None:
        return None, "its first write was not one box (points or several blocks)"
    n = pieces(ds["dims"], block)
    if n <= 1:
        return None, "each write is already one contiguous piece of the file"
    nbytes = math.prod(block) * ds["element_size"]
    if nbytes // n >= MAX_PIECE:
        return None, f"its pieces are {nbytes // n:,} bytes each: chunking gained only for pieces under 1 KiB"
    if nbytes < MIN_CHUNK:
        return None, f"a box of {nbytes} bytes would make chunks under {MIN_CHUNK // 1024} KiB"
    if nbytes > MAX_CHUNK:
        return None, f"a box of {nbytes} bytes is larger than HDF5's largest chunk"
    return block, f"each write is {n:,} pieces of {nbytes // n:,} bytes; chunked like it, one piece"


def findings(report: dict | None, glob_of_phase) -> tuple[list[dict], list[dict]]:
    """(findings, datasets left alone with why) of a run report (`glob_of_phase(phase)`: its file pattern)."""
    found, left = [], []
    seen = set()
    phases = report.get("phases") if isinstance(report, dict) else None
    for ph in phases if isinstance(phases, list) else []:
        if not isinstance(ph, dict) or ph.get("kind") != "hdf5":
            continue
        glob = glob_of_phase(ph)
        for ds in datasets(ph):
            if (glob, ds["name"]) in seen:
                continue
            seen.add((glob, ds["name"]))
            chunk, why = chunk_advice(ds)
            if chunk is None:
                left.append({"file": glob, "dataset": ds["name"], "reason": why})
                continue
            group = {"file": glob, "dataset": ds["name"], "hdf5": {"chunk_dims": chunk}}
            found.append(
                {
                    "code": "chunk-like-writes",
                    "level": "info",
                    "title": "HDF5: chunks shaped like each rank's writes",
                    "message": f"{Path(str(ph.get('file', glob))).name}:{ds['name']} {ds['dims']} is contiguous and "
                    f"{why} -> hdf5.chunk_dims={chunk}",
                    "evidence": {
                        "dataset": ds["name"],
                        "dims": ds["dims"],
                        "element_size": ds["element_size"],
                        "first_write_block": chunk,
                        "pieces_per_write": pieces(ds["dims"], chunk),
                    },
                    "files": [str(ph.get("file", glob))],
                    "recommendation": "chunk the dataset like the box each rank writes, so that a write fills "
                    "whole chunks in one piece each",
                    "knobs": {},  # a dataset group (dataset_groups), not the file's knobs
                    "dataset_groups": [group],
                    "knob_files": None,
                    "keeps": [],
                    "scope": [glob],
                    "code_change": None,
                    "source": "iotuner's measurements on bandio (docs/results.md); the layout the run report's "
                    "datasets section shows",
                    "thresholds": {},
                }
            )
    return found, left
