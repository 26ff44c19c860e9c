"""The applicable settings document of an advice: the knobs the findings map
to, as a settings document the runtime applies (`iotuner run --config`) and
the tuner starts from (`iotuner tune --baseline`). Recommendations that need
code changes are listed apart.

From a run report, the document starts from the settings the run used and
adds the fixes as later groups, which override it knob by knob. A knob two
findings want at different values takes the value of the higher level (then
of the earlier row of the table); the other is listed as a conflict.
"""

from __future__ import annotations

from typing import Any

from .. import settings
from ..catalogue import LAYERS
from .profile import Profile


def build(profile: Profile, findings: list[dict], source: str) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """(settings document, [{knob, value, files, from}], conflicts, code changes)."""
    chosen: dict[tuple[str | None, str], dict] = {}
    conflicts = []
    for f in findings:  # already ordered by level, then by the table
        if f["level"] == "ok":
            continue
        for knob, value in (f.get("knobs") or {}).items():
            for glob in f.get("knob_files") or [None]:
                key = (glob, knob)
                if key in chosen:
                    if chosen[key]["value"] != value:
                        conflicts.append({"knob": knob, "files": glob, "kept": chosen[key]["value"],
                                          "kept_from": chosen[key]["from"], "dropped": value, "dropped_from": f["code"]})
                    continue
                chosen[key] = {"knob": knob, "value": value, "files": glob, "from": f["code"]}
    code_changes = []
    seen = set()
    for f in findings:
        if f["level"] != "ok" and f.get("code_change") and f["code"] not in seen:
            seen.add(f["code"])
            code_changes.append({"code": f["code"], "level": f["level"], "change": f["code_change"],
                                 "files": f["files"][:5]})
    base = profile.job.settings_document
    try:
        doc: dict[str, Any] = settings.validate(base) if base else {"version": settings.VERSION}
    except settings.SettingsError:  # the run's document no longer passes (a range this iotuner knows): fixes alone
        base, doc = None, {"version": settings.VERSION}
    doc["description"] = f"iotuner advise: fixes for {source}" + (
        " (on top of the settings of that run)" if base else "")
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
    doc["groups"] = groups
    doc["meta"] = {**(doc.get("meta") or {}), "advise": {
        "input": source, "knobs": [{k: v for k, v in c.items()} for c in chosen.values()],
        "code_changes": [c["change"] for c in code_changes]}}
    try:
        doc = settings.validate(doc)
    except settings.SettingsError as e:  # a fix the runtime would refuse: keep the base, say why
        doc = settings.validate(base) if base else {"version": settings.VERSION}
        doc["meta"] = {"advise": {"input": source, "error": str(e)}}
    return doc, list(chosen.values()), conflicts, code_changes
