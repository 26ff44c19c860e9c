"""A fitted performance model: its terms and coefficients, predictions, the
equation as the paper prints it, and its JSON form. No scikit-learn here:
loading and applying a saved model costs nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .basis import Term

RESPONSES = ("time", "log-time")


class FitError(ValueError):
    pass


@dataclass
class Model:
    """A fitted model: response = intercept + sum(coef * term); the response is the time or its log."""

    terms: list[Term]
    intercept: float
    coefs: list[float]
    response: str = "time"
    r2: float | None = None  # of the time, on the points fitted (the paper's R-squared)
    cv_error: float | None = None  # mean absolute percentage error of the time on held-out points
    n: int = 0  # points fitted
    candidates: int = 0
    legend: dict[str, str] = field(default_factory=dict)  # variable -> what it is (knob, unit)

    def predict(self, table: Mapping[str, np.ndarray], rows: int | None = None) -> np.ndarray:
        """The predicted time of each row (rows: their number, when the table has no column)."""
        n = rows if rows is not None else len(next(iter(table.values())))
        out = np.full(n, self.intercept, dtype=float)
        for t, c in zip(self.terms, self.coefs):
            out += c * t.values(table)
        return np.exp(out) if self.response == "log-time" else out

    def variables(self) -> set[str]:
        return set().union(*(t.variables() for t in self.terms)) if self.terms else set()

    def equation(self, lhs: str = "t") -> str:
        """The model as the paper writes it, e.g. t = 10.59 + 68.99 / s + 59.83 / a - 1.23 c / s."""
        parts = [f"{self.intercept:.4g}"]
        for t, c in zip(self.terms, self.coefs):
            parts.append(f"{'-' if c < 0 else '+'} {abs(c):.4g} {t.text()}")
        head = f"log {lhs}" if self.response == "log-time" else lhs
        return f"{head} = " + " ".join(parts)

    def quality(self) -> str:
        out = [f"{self.n} points", f"{len(self.terms)} of {self.candidates} candidate terms"]
        if self.r2 is not None:
            out.append(f"R-squared {self.r2:.3f}")
        if self.cv_error is not None:
            out.append(f"cross-validated error {100 * self.cv_error:.1f}%")
        return ", ".join(out)

    def describe(self, lhs: str = "t") -> str:
        legend = "; ".join(f"{k} = {v}" for k, v in sorted(self.legend.items()) if k in self.variables())
        return f"{self.equation(lhs)}\n  ({self.quality()})" + (f"\n  where {legend}" if legend else "")

    def to_json(self) -> dict:
        return {
            "response": self.response,
            "intercept": self.intercept,
            "terms": [{**t.to_json(), "coef": c, "text": t.text()} for t, c in zip(self.terms, self.coefs)],
            "r2": self.r2,
            "cv_error": self.cv_error,
            "n": self.n,
            "candidates": self.candidates,
            "legend": self.legend,
            "equation": self.equation(),
        }

    @classmethod
    def from_json(cls, doc: Mapping) -> Model:
        try:
            if doc.get("response") not in RESPONSES:
                raise FitError(f"unknown response {doc.get('response')!r}: expected {' or '.join(RESPONSES)}")
            terms = [Term.from_json(t) for t in doc.get("terms", [])]
            return cls(
                terms,
                float(doc["intercept"]),
                [float(t["coef"]) for t in doc.get("terms", [])],
                doc["response"],
                doc.get("r2"),
                doc.get("cv_error"),
                int(doc.get("n", 0)),
                int(doc.get("candidates", 0)),
                dict(doc.get("legend", {})),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise FitError(f"not a fitted model: {e}") from None
