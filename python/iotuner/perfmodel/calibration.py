"""Operation costs learned once per machine (the hybrid model's surrogates, Isaila et al. section V-C / VI-A).

`iotuner calibrate` runs the micro-benchmarks (iotuner-microbench) and fits one surrogate per operation on
log10(seconds): k-nearest neighbours, SVR with an RBF kernel and a random forest, each tuned by 5-fold
cross-validation, the best by cross-validated RMSE kept. The calibration file keeps the measurements and the
chosen learner with its parameters (JSON, no pickled models: loading refits in well under a second, on any
scikit-learn version).
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .. import inputs, schema
from ..files import OutputError, write_atomic

FORMAT = "iotuner-calibration"
VERSION = 1

# operation -> the features of its surrogate (all from the micro-benchmark's records)
SURROGATES = {
    "allgather": ("bytes", "nprocs"),
    "alltoall": ("bytes", "nprocs"),
    "allreduce": ("bytes", "nprocs"),
    "bcast": ("bytes", "nprocs"),
    "p2p": ("bytes", "nprocs"),
    "pwrite": ("bytes", "writers", "first", "sync"),
    "pread": ("bytes", "writers", "first"),  # first: a region just written, read the first time
}


class CalibrationError(ValueError):
    """A calibration file that cannot be used: missing, corrupt, or from another format."""


def default_path() -> Path:
    """This machine's calibration file: $IOTUNER_CALIBRATION, else ~/.cache/iotuner/calibration-HOST.json."""
    env = os.environ.get("IOTUNER_CALIBRATION")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "iotuner" / f"calibration-{socket.gethostname()}.json"


def _features(name: str, rec: dict) -> list[float]:
    return [math.log2(max(1, rec[f])) if f == "bytes" else float(rec.get(f, 0)) for f in SURROGATES[name]]


def _candidates(seed: int):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    return {
        "knn": (
            make_pipeline(StandardScaler(), KNeighborsRegressor()),
            {
                "kneighborsregressor__n_neighbors": [1, 2, 3, 5, 8],
                "kneighborsregressor__weights": ["uniform", "distance"],
            },
        ),
        "svr-rbf": (
            make_pipeline(StandardScaler(), SVR(kernel="rbf")),
            {"svr__C": [1.0, 10.0, 100.0], "svr__gamma": ["scale", 0.1, 1.0], "svr__epsilon": [0.01, 0.1]},
        ),
        "random-forest": (RandomForestRegressor(n_estimators=100, random_state=seed), {"min_samples_leaf": [1, 3]}),
    }


def _learner(kind: str, params: dict, seed: int = 0):
    from sklearn.base import clone

    est, _ = _candidates(seed)[kind]
    return clone(est).set_params(**params)


@dataclass
class Surrogate:
    name: str
    learner: str
    params: dict
    cv_r2: float  # cross-validated R-squared of log10(seconds)
    cv_rmse_s: float  # cross-validated RMSE in seconds (back-transformed)
    cv_rmse_log10: float
    points: int
    model: Any = field(default=None, repr=False)

    def predict(self, rows: list[list[float]]) -> list[float]:
        return [10.0**v for v in self.model.predict(rows)]


def fit(name: str, records: list[dict], seed: int = 0) -> Surrogate:
    """Model selection for one operation: each learner tuned by 5-fold CV, the best by CV RMSE."""
    import numpy as np
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_predict

    rows = [r for r in records if r["op"] == name and r["seconds"] > 0]
    if len(rows) < 6:
        raise CalibrationError(f"calibration: {len(rows)} measurements of {name}; need at least 6")
    X = np.array([_features(name, r) for r in rows])
    y = np.log10([r["seconds"] for r in rows])
    folds = KFold(n_splits=min(5, len(rows)), shuffle=True, random_state=seed)
    best = None
    for kind, (est, grid) in _candidates(seed).items():
        search = GridSearchCV(est, grid, cv=folds, scoring="neg_root_mean_squared_error").fit(X, y)
        if best is None or search.best_score_ > best[2]:
            best = (kind, search.best_params_, search.best_score_)
    kind, params, _ = cast(tuple, best)  # there is at least one candidate
    pred = cross_val_predict(_learner(kind, params, seed), X, y, cv=folds)
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum()) or 1e-300
    rmse_s = float(np.sqrt(np.mean((10.0**y - 10.0**pred) ** 2)))
    model = _learner(kind, params, seed).fit(X, y)
    return Surrogate(
        name,
        kind,
        {k: v for k, v in params.items()},
        1 - ss_res / ss_tot,
        rmse_s,
        float(np.sqrt(np.mean((y - pred) ** 2))),
        len(rows),
        model,
    )


@dataclass
class Calibration:
    records: list[dict]
    surrogates: dict[str, Surrogate]
    meta: dict

    # ---- costs ----

    def cost(
        self, op: str, nbytes: int, *, nprocs: int = 1, writers: int = 1, first: bool = False, sync: bool = False
    ) -> float:
        """Seconds of one operation."""
        key = (op, nbytes, nprocs, writers, bool(first), bool(sync))
        cache = self.__dict__.setdefault("_costs", {})
        if key not in cache:  # a ranking asks for the same few operations thousands of times
            rec = {"bytes": nbytes, "nprocs": nprocs, "writers": writers, "first": int(first), "sync": int(sync)}
            cache[key] = self.surrogates[op].predict([_features(op, rec)])[0]
        return cache[key]

    def refit(self, records: list[dict]) -> Calibration:
        """The same learners, with the same parameters, on other measurements (the noise study)."""
        import numpy as np

        surrogates = {}
        for name, s in self.surrogates.items():
            rows = [r for r in records if r["op"] == name and r["seconds"] > 0]
            X = np.array([_features(name, r) for r in rows])
            y = np.log10([r["seconds"] for r in rows])
            surrogates[name] = Surrogate(
                name,
                s.learner,
                s.params,
                s.cv_r2,
                s.cv_rmse_s,
                s.cv_rmse_log10,
                len(rows),
                _learner(s.learner, s.params).fit(X, y),
            )
        return Calibration(records, surrogates, dict(self.meta))

    # ---- the file ----

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            **self.meta,
            "surrogates": {
                n: {
                    "learner": s.learner,
                    "params": s.params,
                    "cv_r2": s.cv_r2,
                    "cv_rmse_s": s.cv_rmse_s,
                    "cv_rmse_log10": s.cv_rmse_log10,
                    "points": s.points,
                }
                for n, s in self.surrogates.items()
            },
            "measurements": self.records,
        }

    def save(self, path: Path) -> Path:
        """Atomically; files.OutputError when it cannot be written."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        return write_atomic(path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path | None = None) -> Calibration:
        path = Path(path) if path else default_path()
        return cls.from_doc(_read(path), path)

    @classmethod
    def from_doc(cls, doc: dict, path: Path | str = "the calibration") -> Calibration:
        """From a calibration document (a file's content, or one a recorded sweep carries)."""
        check(doc, path)
        import numpy as np

        records = doc["measurements"]
        surrogates = {}
        for name, s in doc.get("surrogates", {}).items():
            if name not in SURROGATES:
                continue
            rows = [r for r in records if r["op"] == name and r["seconds"] > 0]
            try:
                X = np.array([_features(name, r) for r in rows])
                y = np.log10([r["seconds"] for r in rows])
                model = _learner(s["learner"], s["params"]).fit(X, y)
            except (ValueError, TypeError, ArithmeticError) as e:  # too few points for its learner, ...
                raise CalibrationError(
                    f"{path}: the {name} surrogate ({s['learner']}) cannot be fitted to "
                    f"its {len(rows)} measurements ({_first_line(e)}); run 'iotuner calibrate' "
                    "again"
                ) from None
            surrogates[name] = Surrogate(
                name, s["learner"], s["params"], s["cv_r2"], s["cv_rmse_s"], s["cv_rmse_log10"], s["points"], model
            )
        missing = set(SURROGATES) - set(surrogates)
        if missing:
            raise CalibrationError(
                f"{path} lacks the surrogates {', '.join(sorted(missing))}; run 'iotuner calibrate' again"
            )
        meta = {k: v for k, v in doc.items() if k not in ("format", "version", "surrogates", "measurements")}
        return cls(records, surrogates, meta)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:160] if text else type(e).__name__


def check(doc, path: Path | str) -> None:
    """CalibrationError naming the first field of doc that a calibration cannot have (its schema,
    docs/calibration.schema.json): every reader downstream can trust the shapes."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise CalibrationError(f"{path} is not an iotuner calibration file (version {VERSION})")
    try:
        schema.check(doc, "calibration.schema.json")
    except schema.SchemaError as e:
        raise CalibrationError(f"calibration file {path} is damaged: {e}; run 'iotuner calibrate' again") from None


def _read(path: Path) -> dict:
    if not path.exists() and not path.is_symlink():
        raise CalibrationError(
            f"no calibration file at {path}: run 'iotuner calibrate' on this machine first"
        ) from None
    try:
        doc = inputs.read_json(path, "an iotuner calibration file")
    except inputs.InputError as e:
        raise CalibrationError(
            f"calibration file {path} is unreadable or corrupt ({e}); run 'iotuner calibrate' again"
        ) from None
    check(doc, path)
    return doc


def measurements(path: Path | None = None) -> tuple[list[dict], dict]:
    """(the measurements, the file's metadata) of a calibration file, without fitting the surrogates
    (iotuner simulate derives a platform from the measurements themselves)."""
    path = Path(path) if path else default_path()
    doc = _read(path)
    return doc["measurements"], {k: v for k, v in doc.items() if k not in ("surrogates", "measurements")}


def build(records: list[dict], meta: dict | None = None, seed: int = 0) -> Calibration:
    surrogates = {name: fit(name, records, seed) for name in SURROGATES}
    info = {"host": socket.gethostname(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    info.update(meta or {})
    return Calibration(records, surrogates, info)


def with_noise(records: list[dict], sigma: float, rng) -> list[dict]:
    """The measurements with multiplicative log-normal noise: seconds x exp(N(0, sigma^2)) (always positive;
    the paper's 1 + N(0, sigma^2) goes negative for sigma >= 1)."""
    return [{**r, "seconds": r["seconds"] * math.exp(rng.normal(0.0, sigma))} for r in records]
