"""A model saved with its data: `OUT/model.json`, and `--warm-start FILE`.

    {"format": "iotuner-model", "version": 1,
     "study": "...", "created": "...",
     "objective": {"name": "write-bw", "direction": "maximize", "unit": "MB/s"},
     "space": {...},                       # the space, as SearchSpace.to_json
     "target": "min",                      # what each point's runs were reduced to
     "scale": {"size_mib": 64, "ranks": 2},   # the problem size of the study that saved it
     "model": {...},                       # the fitted model: terms, coefficients, R-squared, equation
     "data": [{"point": {...}, "scale": {...}, "value": 812.5, "time": 0.0826}, ...],
     "warm_start": {...}}                  # when it was itself warm-started: how well that model predicted

The data are the points the model was fitted on (their settings, problem
size and measured value): a study warm-started from the file fits again on
them and its own, so models accumulate problem sizes across studies.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fitted import FitError, Model

FORMAT, VERSION = "iotuner-model", 1


class SavedModelError(ValueError):
    pass


@dataclass
class Row:
    point: dict[str, Any]  # {dimension: value}
    scale: dict[str, float]  # size_mib, ranks (empty when unknown)
    value: float  # the objective, reduced over the point's runs (target)
    time: float  # the model's response

    def to_json(self) -> dict:
        return {"point": self.point, "scale": self.scale, "value": self.value, "time": self.time}


@dataclass
class Saved:
    model: Model
    objective: dict
    space: dict
    target: str
    scale: dict[str, float]
    data: list[Row] = field(default_factory=list)
    study: str = ""
    warm_start: dict | None = None
    path: str = ""

    def to_json(self) -> dict:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "study": self.study,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "objective": self.objective,
            "space": self.space,
            "target": self.target,
            "scale": self.scale,
            "model": self.model.to_json(),
            "data": [r.to_json() for r in self.data],
        }
        if self.warm_start:
            doc["warm_start"] = self.warm_start
        return doc

    def save(self, path: str | os.PathLike) -> None:
        """Atomically: a reader never sees half a file."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(self.to_json(), indent=1) + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)


def load(path: str | os.PathLike) -> Saved:
    """A saved model; SavedModelError naming the file and the problem otherwise."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise SavedModelError(f"cannot read the model {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise SavedModelError(f"{path} is not a saved model: not valid JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SavedModelError(
            f'{path} is not a saved model (no "format": "{FORMAT}"); iotuner tune --strategy '
            f"model writes one as OUT/model.json"
        )
    if doc.get("version") != VERSION:
        raise SavedModelError(f"{path} is model format version {doc.get('version')}; this iotuner reads {VERSION}")
    try:
        model = Model.from_json(doc["model"])
        rows = [
            Row(
                dict(r["point"]),
                {k: float(v) for k, v in (r.get("scale") or {}).items()},
                float(r["value"]),
                float(r["time"]),
            )
            for r in doc.get("data", [])
        ]
        return Saved(
            model,
            dict(doc["objective"]),
            dict(doc["space"]),
            str(doc.get("target", "min")),
            {k: float(v) for k, v in (doc.get("scale") or {}).items()},
            rows,
            str(doc.get("study", "")),
            doc.get("warm_start"),
            str(path),
        )
    except (KeyError, TypeError, ValueError, AttributeError, FitError) as e:
        raise SavedModelError(f"{path} is a damaged saved model: {e}") from None


def compatible(saved: Saved, objective: Mapping[str, Any], dimensions: set[str]) -> list[str]:
    """Why a saved model cannot start this study (empty: it can)."""
    problems = []
    if saved.objective.get("name") != objective.get("name") or saved.objective.get("direction") != objective.get(
        "direction"
    ):
        problems.append(
            f"it models objective {saved.objective.get('name')} ({saved.objective.get('direction')}), "
            f"this study tunes {objective.get('name')} ({objective.get('direction')})"
        )
    theirs = {d.get("knob") or d.get("name") for d in saved.space.get("dimensions", [])}
    if theirs != dimensions:
        diff = [
            f"{what}: {', '.join(sorted(names))}"
            for what, names in (
                ("only in the model's", theirs - dimensions),
                ("only in this study's", dimensions - theirs),
            )
            if names
        ]
        problems.append(f"it was fitted on another space ({'; '.join(diff)})")
    return problems
