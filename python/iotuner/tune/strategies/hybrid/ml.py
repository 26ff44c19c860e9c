"""The black-box model of Isaila et al. (their `ml`): SVR with an RBF kernel fitted on configuration runs of a
balanced fractional design, every configuration predicted, the predicted top k run, the best measured kept.

Options (--strategy-option): train=N training runs (default: a third of the space, at least 4), top=K
(default 3)."""

from __future__ import annotations

import itertools
import math

from ...protocol import Strategy
from .. import register
from .fraction import balanced_fraction


def encode(space, labels: dict[str, str]) -> list[float]:
    """Features of a point: numeric knob values on a log scale, other values one-hot."""
    row = []
    for d in space.dimensions:
        value = d.value_of(labels[d.name])
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in d.values):
            row.append(math.log2(max(1.0, float(value))))
        else:
            row += [1.0 if d.label(v) == labels[d.name] else 0.0 for v in d.values]
    return row


def fit_svr(X, y):
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    model = make_pipeline(StandardScaler(), SVR(kernel="rbf"))
    if len(X) >= 6:
        grid = {"svr__C": [1.0, 10.0, 100.0], "svr__gamma": ["scale", 0.1, 1.0]}
        return (
            GridSearchCV(
                model,
                grid,
                cv=KFold(min(5, len(X)), shuffle=True, random_state=0),
                scoring="neg_root_mean_squared_error",
            )
            .fit(X, y)
            .best_estimator_
        )
    return model.fit(X, y)


@register(
    "ml",
    "SVR-RBF fitted on a balanced fractional design of training runs, then the predicted top k "
    "(Isaila et al.'s black-box baseline)",
)
class ML(Strategy):
    def __init__(self, space, seed, options):
        super().__init__(space, seed, options)
        self.train = self.int_option("train", max(4, space.size() // 3), least=2)
        self.top = self.int_option("top", 3, least=1)
        self.ranking: list[dict] = []
        self.proposed = 0
        self.trained = 0

    def design(self) -> list[tuple]:

        return balanced_fraction([d.labels for d in self.space.dimensions], self.train, self.seed)

    def training_runs(self, repeats: int) -> int:
        return len(self.design())  # repeated combinations of the design are dropped

    def fit_runs(self, runs: int, repeats: int) -> str | None:
        if "train" in self.options:
            return None
        self.train = max(4, min(self.train, runs - self.top))
        return f"ml: a design of {self.train} training runs, so that they and its top {self.top} fit the run budget"

    def prepare(self, ctx):
        dims = self.space.dimensions
        rows = self.design()
        X, y, tried = [], [], set()
        for row in rows:
            labels = dict(zip((d.name for d in dims), row))
            record, m = ctx.measure(self.space.point_settings(self.space.decode(labels)))
            tried.add(row)
            self.trained = len(tried)
            if m.ok and m.value is not None and m.value > 0:
                X.append(encode(self.space, labels))
                y.append(math.log(m.value))
        if len(X) < 2:
            ctx.note("ml: fewer than two training runs succeeded; nothing to fit")
            return
        model = fit_svr(X, y)
        everything = [
            dict(zip((d.name for d in dims), row))
            for row in itertools.product(*(d.labels for d in dims))
            if row not in tried
        ]
        if not everything:
            return
        pred = model.predict([encode(self.space, p) for p in everything])
        order = sorted(range(len(everything)), key=lambda i: ctx.objective.key(math.exp(pred[i])), reverse=True)
        self.ranking = [everything[i] for i in order]
        ctx.note(f"ml: SVR-RBF fitted on {len(X)} training runs; predicting {len(everything)} configurations")

    def propose(self, ctx):
        if self.proposed >= min(self.top, len(self.ranking)):
            return None
        self.proposed += 1
        return self.ranking[self.proposed - 1]

    def searched_size(self):
        # the exhaustion rule counts every measured configuration, the training runs' too
        return self.trained + min(self.top, len(self.ranking)) if self.ranking else None

    def stop(self, ctx):
        if self.proposed >= min(self.top, len(self.ranking)):
            return f"ml: the predicted top {self.proposed} ran"
        return None
