"""The applicable settings document of an advice: the knobs the findings map
to, as a settings document the runtime applies (`iotuner run --config`) and
the tuner starts from (`iotuner tune --baseline`). Recommendations that need
code changes are listed apart.

From a run report, the document starts from the settings the run used and
adds the fixes as later groups, which override it knob by knob.

The advice never contradicts itself. Findings rank by level, then by their
row (the checks' table before SmartIO's rules). A knob two findings want at
different values takes the value of the higher-ranked one; and a fix that
would undo what a higher-ranked finding recommends for the same files is left
out (a check's `keeps`: recommending collective aggregation rules out
disabling collective buffering or switching to independent transfers). Both
are listed as conflicts, with the finding that won.
"""

from __future__ import annotations

import json
from fnmatch import fnmatch
from typing import Any

from .. import settings
from ..catalogue import LAYERS
from .profile import Profile


def _overlap(a: list[str] | None, b: list[str] | None) -> bool:
    """Do two sets of file globs (None: every file) share a file, as far as the globs say?"""
    if a is None or b is None:
        return True
    return any(x == y or fnmatch(x, y) or fnmatch(y, x) for x in a for y in b)


def build(profile: Profile, findings: list[dict], source: str) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """(settings document, [{knob, value, files, from}], conflicts, code changes)."""
    chosen: dict[tuple[str | None, str], dict] = {}
    conflicts = []
    ruled_out: list[dict] = []  # what the higher-ranked findings' recommendations rule out, and where
    for f in findings:  # already ordered by level, then by the table
        if f["level"] == "ok":
            continue
        for knob, value in (f.get("knobs") or {}).items():
            for glob in f.get("knob_files") or [None]:
                key = (glob, knob)
                if key in chosen:
                    if chosen[key]["value"] != value:
                        conflicts.append(
                            {
                                "knob": knob,
                                "files": glob,
                                "kept": chosen[key]["value"],
                                "kept_from": chosen[key]["from"],
                                "dropped": value,
                                "dropped_from": f["code"],
                                "why": f"{chosen[key]['from']} ranks higher and sets "
                                f"{json.dumps(chosen[key]['value'])}",
                            }
                        )
                    continue
                against = next(
                    (
                        r
                        for r in ruled_out
                        if r["knob"] == knob
                        and r["value"] == value
                        and r["from"] != f["code"]
                        and _overlap(r["scope"], [glob] if glob else None)
                    ),
                    None,
                )
                if against:
                    conflicts.append(
                        {
                            "knob": knob,
                            "files": glob,
                            "kept": None,
                            "kept_from": against["from"],
                            "dropped": value,
                            "dropped_from": f["code"],
                            "why": f"it would undo {against['from']} ({against['recommendation']})",
                        }
                    )
                    continue
                chosen[key] = {"knob": knob, "value": value, "files": glob, "from": f["code"]}
        ruled_out += [
            {
                "knob": k,
                "value": v,
                "scope": f.get("scope"),
                "from": f["code"],
                "recommendation": f.get("recommendation") or "",
            }
            for k, v in f.get("keeps") or []
        ]
    code_changes = []
    seen = set()
    for f in findings:
        if f["level"] != "ok" and f.get("code_change") and f["code"] not in seen:
            seen.add(f["code"])
            code_changes.append(
                {"code": f["code"], "level": f["level"], "change": f["code_change"], "files": f["files"][:5]}
            )
    base = profile.job.settings_document
    try:
        doc: dict[str, Any] = settings.validate(base) if base else {"version": settings.VERSION}
    except settings.SettingsError:  # the run's document no longer passes (a range this iotuner knows): fixes alone
        base, doc = None, {"version": settings.VERSION}
    doc["description"] = f"iotuner advise: fixes for {source}" + (
        " (on top of the settings of that run)" if base else ""
    )
    groups = list(doc.get("groups", []))
    by_glob: dict[str | None, dict[str, dict]] = {}
    for (glob, knob), c in chosen.items():
        layer, _, name = knob.partition(".")
        if layer in LAYERS:
            by_glob.setdefault(glob, {}).setdefault(layer, {})[name] = c["value"]
    if None in by_glob:
        groups.append(by_glob.pop(None))
    for glob in sorted(by_glob):
        groups.append({"file": glob, **by_glob[glob]})
    for f in findings:  # dataset-level fixes (a chunk shape) as their own groups, after the file's
        if f["level"] != "ok":
            groups += [g for g in f.get("dataset_groups") or [] if g not in groups]
    doc["groups"] = groups
    doc["meta"] = {
        **(doc.get("meta") or {}),
        "advise": {
            "input": source,
            "knobs": [{k: v for k, v in c.items()} for c in chosen.values()],
            "code_changes": [c["change"] for c in code_changes],
        },
    }
    try:
        doc = settings.validate(doc)
    except settings.SettingsError as e:  # a fix the runtime would refuse: keep the base, say why
        doc = settings.validate(base) if base else {"version": settings.VERSION}
        doc["meta"] = {"advise": {"input": source, "error": str(e)}}
    return doc, list(chosen.values()), conflicts, code_changes
