"""Model-driven tuning (paper 001): the regression recovers a known model, the training design, the
prediction of every configuration, and the strategy in a study (training runs, top k, refit, saved
model, warm start across problem sizes)."""

import csv
import itertools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from iotuner import settings
from iotuner.settings import as_text, complete
from iotuner.tune import objective, strategies, tuner
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune import study_config as cfg
from iotuner.tune.evaluate import Measurement
from iotuner.tune.strategies.model import basis, design, features, fit, rank, saved
from iotuner.tune.strategies.model.basis import Term
from tune_helpers import make_study

MIB = 1024 * 1024

# paper 001, Eq. 3: VPIC-IO on Edison, write time with s in MB and f in GB
EQ3 = {
    Term(): 10.59,
    Term((("s", -1),)): 68.99,
    Term((("a", -1),)): 59.83,
    Term((("c", 1), ("s", -1))): -1.23,
    Term((("c", -1), ("f", 1))): 2.26,
    Term((("f", 1), ("s", -1))): 0.18,
    Term((("a", -1), ("c", 1), ("f", 1))): 0.01,
}
C = (4, 8, 16, 24, 32, 48, 64, 96, 128, 156)
S = (1, 2, 4, 8, 16, 32, 64, 128)
A = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256)


def eq3(c, s, a, f):
    return sum(
        coef
        * Term.values(t, {"c": np.atleast_1d(c), "s": np.atleast_1d(s), "a": np.atleast_1d(a), "f": np.atleast_1d(f)})
        for t, coef in EQ3.items()
    )


def test_the_fit_recovers_the_papers_eq3_terms_and_coefficients():
    """100 points of Eq. 3 with its published coefficients at three file sizes, 0.2% multiplicative noise:
    forward selection over the 80 candidate products (81 terms with the intercept, as in the paper) finds
    exactly its six terms, and every coefficient within 5%. (With 1% noise it still finds the terms, but
    the small ones' coefficients, 59.83 / a among times up to 3,500 s, vary by up to 14%.)"""
    rng = np.random.default_rng(7)
    grid = np.array(list(itertools.product(C, S, A, (1024, 2048, 4096))), dtype=float)
    rows = grid[rng.choice(len(grid), 100, replace=False)]
    table = {v: rows[:, i] for i, v in enumerate("csaf")}
    t = eq3(*rows.T) * np.exp(rng.normal(0, 0.002, len(rows)))
    cands = basis.candidates(list("csaf"), {})
    assert len(cands) + 1 == 81 == basis.count(4) + 1
    model = fit.select(table, t, cands, seed=0)
    assert model.response == "time"
    assert set(model.terms) == set(EQ3) - {Term()}
    assert model.intercept == pytest.approx(EQ3[Term()], rel=0.05)
    for term, coef in zip(model.terms, model.coefs):
        assert coef == pytest.approx(EQ3[term], rel=0.05), term.text()
    assert model.r2 > 0.999 and model.cv_error < 0.01
    # printed as the paper prints it, and the same after a round trip through JSON
    text = model.equation()
    assert text.startswith("t = 10.") and " - 1.2" in text and " 1 / s" in text and " c f / a" in text
    again = type(model).from_json(json.loads(json.dumps(model.to_json())))
    assert np.allclose(again.predict(table), model.predict(table))


def test_the_fit_chooses_the_log_of_the_time_for_multiplicative_effects():
    """Knobs that scale each other (a product of factors) are additive in log time: the fit takes the log,
    and finds the two factors and their interaction."""
    rng = np.random.default_rng(1)
    x = rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], 60)
    flag = rng.integers(0, 2, 60).astype(float)
    t = 3.0 * np.exp(0.8 / x) * np.where(flag == 1, 5.0, 1.0) ** (1 / x) * np.exp(rng.normal(0, 0.01, 60))
    model = fit.select({"x": x, "m=on": flag}, t, basis.candidates(["x"], {"m": ["m=on"]}), seed=0)
    assert model.response == "log-time"
    assert set(model.terms) == {Term((("x", -1),)), Term((("x", -1),), ("m=on",))}
    coefs = dict(zip(model.terms, model.coefs))
    assert coefs[Term((("x", -1),))] == pytest.approx(0.8, rel=0.05)
    assert coefs[Term((("x", -1),), ("m=on",))] == pytest.approx(math.log(5.0), rel=0.05)


def test_noise_alone_gives_no_terms():
    rng = np.random.default_rng(2)
    x = rng.choice([1.0, 2.0, 4.0, 8.0], 40)
    model = fit.select({"x": x}, np.exp(rng.normal(0, 0.1, 40)), basis.candidates(["x"], {}), seed=0)
    assert model.terms == [] and "0 of 2 candidate terms" in model.quality()
    with pytest.raises(fit.FitError, match="too few"):
        fit.select({"x": x[:3]}, [1.0, 2.0, 3.0], basis.candidates(["x"], {}))


def test_variables_of_a_space():
    enc = features.Encoding(spaces.load("h5evolve"))
    assert {v.name for v in enc.numeric.values()} == {"stripe_count", "stripe_and_cb_size", "cb_nodes", "chunk_bytes"}
    # sizes in MiB; alignment spans 1 byte to 32 MiB, so it is categorical (13 indicators)
    assert enc.numeric["stripe_and_cb_size"].numbers[:3] == (1.0, 2.0, 4.0)
    assert len(enc.categorical["hdf5.alignment"].indicators) == 13
    romio = features.Encoding(spaces.load("romio"))
    assert set(romio.numeric) == {"mpiio.cb_nodes", "mpiio.cb_buffer_size"}
    assert romio.categorical["hdf5.transfer_mode"].indicators == ("transfer_mode=collective",)
    # two values are collinear with the intercept: categorical
    two = features.Encoding(
        spaces.from_json(
            {
                "name": "x",
                "dimensions": [
                    {"knob": "mpiio.cb_nodes", "values": [1, 2]},
                    {"knob": "mpiio.cb_buffer_size", "values": [1048576, 4194304, 8388608]},
                ],
            }
        )
    )
    assert "mpiio.cb_nodes" in two.categorical and "mpiio.cb_buffer_size" in two.numeric
    # every point comes back from its settings (constraint knobs added, as the tuner records them)
    for name in ("romio", "tunio", "h5evolve"):
        sp = spaces.load(name)
        for p in design.training_set(sp, 30, seed=3):
            assert features.point_of(sp, complete(sp.point_settings(p))) == p
    assert features.point_of(spaces.load("romio"), {"mpiio.romio_cb_write": "sometimes"}) is None


def test_training_designs():
    sp = spaces.load("romio")
    pts = design.training_set(sp, 36, seed=0)
    keys = {json.dumps(p, sort_keys=True) for p in pts}
    assert len(pts) == len(keys) == 36  # no point twice
    for d in sp.dimensions:  # space-filling: every value about equally often
        counts = [sum(1 for p in pts if p[d.name] == v) for v in d.values]
        assert min(counts) >= 36 // len(d.values) - 1 and max(counts) <= -(-36 // len(d.values)) + 1, d.name
    assert design.training_set(sp, 36, seed=0) == pts  # reproducible
    small = spaces.from_json({"name": "s", "dimensions": [{"knob": "mpiio.cb_nodes", "values": [1, 2, 4]}]})
    assert sorted(p["mpiio.cb_nodes"] for p in design.training_set(small, 10)) == [1, 2, 4]  # all of it
    # halves of the maximum: 256, 128, ..., 1 of H5Evolve's aggregators (not 192, 96, 48)
    h = spaces.load("h5evolve")
    half = design.training_set(h, 50, seed=0, design="halves")
    assert {p["mpiio.cb_nodes"] for p in half} <= {1, 2, 4, 8, 16, 32, 64, 128, 256}
    assert 256 in {p["mpiio.cb_nodes"] for p in half}
    with pytest.raises(ValueError, match="unknown training design"):
        design.training_set(sp, 5, design="sobol")


def test_every_configuration_is_predicted_and_the_top_k_skip_the_measured(monkeypatch):
    sp = spaces.load("h5evolve")  # 336,000 points
    enc = features.Encoding(sp)
    # t = 1 + 100 / stripe_count + 0.01 cb_nodes: best at 156 stripes and one aggregator
    model = fit.Model([Term((("stripe_count", -1),)), Term((("cb_nodes", 1),))], 1.0, [100.0, 0.01])
    ref = {d.name: d.values[0] for d in sp.dimensions}
    r = rank.top(model, enc, 5, ref, {})
    assert r.method == "exhaustive" and r.predicted == 10 * 12  # only the dimensions the model uses
    best = r.points[0][0]
    assert best["lustre.stripe_count"] == 156 and best["mpiio.cb_nodes"] == 1
    assert best["hdf5.chunk_bytes"] == ref["hdf5.chunk_bytes"]  # the others stay at the reference point
    assert [t for _, t in r.points] == sorted(t for _, t in r.points)
    skipped = rank.top(model, enc, 5, ref, {}, skip=lambda p: p["mpiio.cb_nodes"] == 1)
    assert all(p["mpiio.cb_nodes"] != 1 for p, _ in skipped.points) and len(skipped.points) == 5
    # beyond the limit: coordinate descent on the model finds the same best
    monkeypatch.setattr(rank, "LIMIT", 50)
    r2 = rank.top(model, enc, 5, ref, {})
    assert r2.method == "coordinate descent" and r2.points[0][0] == best
    # a time that is not positive is an extrapolation: left out, and counted
    neg = fit.Model([Term((("cb_nodes", 1),))], 1.0, [-0.01])
    r3 = rank.top(neg, enc, 3, ref, {})
    assert r3.invalid == 3 and all(p["mpiio.cb_nodes"] == 96 for p, _ in r3.points)  # not 128, 192, 256
    # equal predictions: the reference's values first, then one knob the model does not use changed, ...
    differ = [sum(p[d] != ref[d] for d in ref if d != "mpiio.cb_nodes") for p, _ in r3.points]
    assert differ == [0, 1, 1]


# ---- the strategy in a study ----


def rows_of(path):
    return list(csv.DictReader(open(path)))


def test_model_strategy_trains_predicts_and_runs_its_top_k(tmp_path):
    (tmp_path / "out").mkdir()
    store, t = make_study(
        tmp_path, strategy="model", trials=50, strategy_options={"training": 40, "top_k": 6}, out=str(tmp_path / "out")
    )
    outcome = t.run()
    assert (
        outcome.stop.rule == "strategy" and outcome.stopped_because == "model: ran the top 6 predicted configurations"
    )
    assert len(store.trials.records(stores.TRAINING)) == 40 and store.trials.trials_run() <= 6
    assert len(store.trials.search_trials()) == 6
    from iotuner.tune import results

    results.write_all(store, t.objective, outcome, tmp_path / "out", t.clock())
    rows = rows_of(tmp_path / "out" / "trials.csv")
    training = [r for r in rows if r["kind"] == "training"]
    trials = [r for r in rows if r["kind"] == "trial"]
    assert len(training) == 40 and all(r["why"].startswith("training point") for r in training)
    size = t.space.size()
    assert [r["why"].split(", predicted")[0] for r in trials] == [
        f"model round 0: rank {i} of {size:,} configurations" for i in range(1, 7)
    ]
    # the top k are not points trained on
    assert not {r["settings"] for r in trials} & {r["settings"] for r in training}
    # the model: printed as an equation, saved with its data
    note = next(n for n in t.notes if n.startswith("model, round 0"))
    assert "t = " in note and "R-squared" in note and "cross-validated error" in note
    doc = saved.load(tmp_path / "out" / "model.json")
    assert len(doc.data) == 40 + 6 and doc.objective["name"] == "perf"
    # the independent transfers of the ufs model (1.25x) are found
    assert outcome.significant and outcome.verdict.gain > 1.15
    # a training run among the best is confirmed under its own name, not as a trial
    training_numbers = {r.id for r in store.trials.records(stores.TRAINING)}
    for c in t.confirmation.candidates():
        assert c["name"] == (
            f"training run {sorted(training_numbers).index(c['record'])}"
            if c["record"] in training_numbers
            else f"trial {c['trial']}"
        )
    # and the printout says which one won (not "trial None" for a training run)
    import io

    from rich.console import Console

    from iotuner.tune import printout

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    best_doc = json.loads((tmp_path / "out" / "best.json").read_text())
    training_run = dict(summary["winner"], trial=None, name="training run 3")
    trial = {k: v for k, v in summary["winner"].items() if k != "name"} | {"trial": 5}
    for winner, said in ((training_run, "best: training run 3, "), (trial, "best: trial 5, ")):
        console = Console(file=io.StringIO(), width=200)
        printout.print_outcome(console, dict(summary, winner=winner), best_doc, tmp_path / "out")
        assert said in console.file.getvalue(), console.file.getvalue()


def test_a_resumed_model_study_continues_its_top_k(tmp_path):
    """Its state is the records: a new worker fits the same model and runs the rest of the same top k."""
    opts = {"training": 20, "top_k": 8}
    whole, t = make_study(tmp_path, strategy="model", trials=50, strategy_options=opts, name="whole")
    t.run()
    first, t1 = make_study(tmp_path, strategy="model", trials=3, strategy_options=opts, name="part")
    assert t1.run().stop.rule == "trial-budget"
    first.set_budget(cfg.Budget(50, None))
    again = stores.Store.open(f"sqlite:///{tmp_path}/part.db", "part", heartbeat_s=None)
    from iotuner.tune import synthetic

    ev = synthetic.SyntheticEvaluator(synthetic.model("ufs"), t.objective, 0.05, 0.0, 0)
    t2 = tuner.Tuner(again, ev, t.space, t.objective, strategies.make("model", t.space, 0, opts))
    t2.run()
    assert len(again.trials.records(stores.TRAINING)) == 20  # not trained again
    assert [r.settings for r in again.trials.search_trials()] == [r.settings for r in whole.trials.search_trials()]


def test_refit_runs_more_rounds_while_they_improve(tmp_path):
    store, t = make_study(
        tmp_path,
        strategy="model",
        trials=60,
        model="lustre",
        space="tunio",
        strategy_options={"training": 20, "top_k": 5, "refit": True},
    )
    outcome = t.run()
    whys = [r.attrs.get("why", "") for r in store.trials.search_trials()]
    rounds = sorted({int(w.split()[2].rstrip(":")) for w in whys})
    assert rounds[:2] == [0, 1] and len(store.trials.search_trials()) == 5 * len(rounds)
    assert outcome.stop.rule == "strategy" and "did not improve" in outcome.stopped_because
    assert len([n for n in t.notes if n.startswith("model, round")]) == len(rounds)


# ---- scale: a model fitted on small files predicts a large one ----


def eq3_space():
    h = spaces.h5evolve()
    return spaces.SearchSpace(
        "eq3", [h.dimension("lustre.stripe_count"), h.dimension("stripe_and_cb_size"), h.dimension("mpiio.cb_nodes")]
    ).validate()


class Eq3Runs:
    """Runs of Eq. 3 at a file size: the write bandwidth, and the size in the details as a run report gives."""

    def __init__(self, f_gib, noise=0.02, seed=0):
        self.f, self.noise, self.seed = f_gib, noise, seed
        self.objective = objective.parse("write-bw")

    def truth(self, flat):
        # the default: Lustre's layout (1 stripe of 1 MiB) and one aggregator
        t = eq3(
            float(flat.get("lustre.stripe_count", 1)),
            flat.get("lustre.stripe_size", MIB) / MIB,
            float(flat.get("mpiio.cb_nodes", 1)),
            self.f,
        )[0]
        return self.f * 1024 * MIB / 1e6 / t

    def evaluate(self, doc, label):
        import random

        flat = settings.flatten(doc)
        value = self.truth(flat) * math.exp(random.Random(f"{self.seed}:{label}").gauss(0, self.noise))
        return Measurement(
            True,
            value,
            0.0,
            effective={k: [as_text(v)] for k, v in complete(flat).items()},
            details={"bytes_written": int(self.f * 1024 * MIB), "bytes_read": 0, "ranks": 4096},
        )


def eq3_study(tmp_path, name, f_gib, options, trials=30):
    sp = eq3_space()
    obj = objective.parse("write-bw")
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy="model",
        strategy_options=options,
        app=("app",),
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit),
        out=str(tmp_path / name),
        baseline_every=0,
    )
    (tmp_path / name).mkdir()
    store = stores.Store.create(
        f"sqlite:///{tmp_path}/{name}.db", name, config, cfg.Budget(trials, None), heartbeat_s=None
    )
    runs = Eq3Runs(f_gib)
    t = tuner.Tuner(store, runs, sp, obj, strategies.make("model", sp, 0, options))
    return store, t, runs


def test_warm_start_across_problem_sizes(tmp_path):
    """Trained at 1 TiB, warm-started at 2 TiB with 10 runs (the size now varies, so it enters the model),
    then at 4 TiB with no training: it predicts the 4 TiB configurations and runs its top k at once."""
    s1, t1, _ = eq3_study(tmp_path, "small", 1024, {"training": 40, "top_k": 5})
    t1.run()
    m1 = saved.load(tmp_path / "small" / "model.json")
    assert m1.scale["size_mib"] == pytest.approx(1024 * 1024) and m1.scale["ranks"] == 4096
    assert not any("size_mib" in t.variables() for t in m1.model.terms)  # one size: it cannot enter
    s2, t2, _ = eq3_study(
        tmp_path, "mid", 2048, {"training": 10, "top_k": 5, "warm_start": str(tmp_path / "small" / "model.json")}
    )
    t2.run()
    assert len(s2.trials.records(stores.TRAINING)) == 10
    assert any(
        n.startswith("warm start: ") and "predicted this study's first 10 measured points" in n for n in t2.notes
    )
    m2 = saved.load(tmp_path / "mid" / "model.json")
    assert len(m2.data) == 40 + 5 + 10 + 5 and any("size_mib" in t.variables() for t in m2.model.terms)
    assert m2.warm_start["points"] == 10
    # at 4 TiB, never measured: the model's predictions against the truth
    s3, t3, runs = eq3_study(tmp_path, "large", 4096, {"top_k": 5, "warm_start": str(tmp_path / "mid" / "model.json")})
    out = t3.run()
    assert not s3.trials.records(stores.TRAINING) and len(s3.trials.search_trials()) == 5
    sp = eq3_space()
    pts = [dict(zip([d.name for d in sp.dimensions], v)) for v in itertools.product(*(d.values for d in sp.dimensions))]
    enc = features.Encoding(sp)
    scale = {"size_mib": 4096 * 1024.0, "ranks": 4096.0}
    predicted = m2.model.predict(enc.table(pts, [scale] * len(pts)))
    true_t = np.array([4096 * 1024 * MIB / 1e6 / runs.truth(complete(sp.point_settings(p))) for p in pts])
    assert np.median(np.abs(predicted - true_t) / true_t) < 0.10
    best = max(runs.truth(complete(sp.point_settings(p))) for p in pts)
    assert max(runs.truth(r.settings) for r in s3.trials.search_trials()) >= 0.95 * best
    assert out.significant


def test_bad_model_options_and_files_are_named(tmp_path):
    def tune(*args):
        return subprocess.run(
            [sys.executable, "-m", "iotuner", "tune", "--synthetic", "ufs", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
        )

    r = tune("--strategy", "bayes", "--top-k", 5)
    assert r.returncode == 2 and "options of --strategy model" in r.stderr and "Traceback" not in r.stderr
    r = tune("--strategy", "model", "--training", 2)
    assert r.returncode == 2 and "at least 4 training points" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = tune("--strategy", "model", "--warm-start", bad)
    assert r.returncode == 2 and str(bad) in r.stderr and "not valid JSON" in r.stderr
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            {
                "format": "iotuner-model",
                "version": 1,
                "objective": {"name": "perf"},
                "space": spaces.load("tunio").to_json(),
                "model": {"response": "time", "intercept": 1.0, "terms": []},
            }
        )
    )
    r = tune("--strategy", "model", "--warm-start", other)
    assert r.returncode == 2 and "fitted on another space" in r.stderr


def test_the_cli_prints_the_fitted_equation_as_saved(tmp_path):
    """The printout is the saved model's equation, indicator terms ('[transfer_mode=collective]') included:
    notes are plain text, not rich markup that would swallow them."""
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--synthetic",
            "ufs",
            "--strategy",
            "model",
            "--training",
            "40",
            "--top-k",
            "2",
            "--out",
            str(out),
            "--study",
            "eq",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert r.returncode == 0, r.stderr
    first = json.loads((out / "model.json").read_text())["model"]
    assert any("[" in t["text"] for t in first["terms"])  # an indicator, in the rich-markup form
    # the printout wraps to the terminal width: compare the words
    assert " ".join(("t = " + first["equation"].split("t = ", 1)[1]).split()) in " ".join(r.stdout.split())
