"""Running a study in-process on the synthetic objective."""

from iotuner.tune import objective, space as spaces, study, synthetic, tuner


def synthetic_study(tmp_path, *, model="ufs", space="romio", strategy="random", trials=15, sigma=0.05, seed=0,
                    name="t", **options):
    sp = spaces.load(space) if isinstance(space, str) else space
    obj = objective.parse("perf")
    config = {"strategy": strategy, "seed": seed, "strategy_options": {}, "space": sp.to_json(),
              "objective": {"name": obj.name, "pattern": None, "direction": obj.direction, "unit": obj.unit}}
    store = study.StudyStore.create(f"sqlite:///{tmp_path}/{name}.db", name, config, sp)
    evaluator = synthetic.SyntheticEvaluator(synthetic.model(model), obj, sigma, 0.0, seed)
    t = tuner.Tuner(store, evaluator, sp, obj, {"version": 1}, tuner.Budget(trials, None), tuner.Options(**options))
    return store, t.run(), t
