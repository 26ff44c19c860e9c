"""Running a study in-process on the synthetic objective."""

from iotuner.tune import objective, strategies, synthetic, tuner
from iotuner.tune import space as spaces
from iotuner.tune import store as stores
from iotuner.tune import study_config as cfg


class FakeClock:
    """Deterministic time for the tuner: a synthetic run's delay advances it, nothing else does."""

    def __init__(self, start: float = 1_000_000.0):
        self.t = start

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def make_study(
    tmp_path,
    *,
    model="ufs",
    space="romio",
    strategy="random",
    trials=15,
    seconds=None,
    sigma=0.05,
    seed=0,
    delay=0.0,
    objective_name="perf",
    name="t",
    storage=None,
    clock=None,
    strategy_options=None,
    **options,
):
    """(store, tuner) of a study on a synthetic model, before running. options: StudyConfig fields."""
    sp = spaces.load(space) if isinstance(space, str) else space
    obj = objective.parse(objective_name)
    config = cfg.StudyConfig(
        space=sp.to_json(),
        strategy=strategy,
        seed=seed,
        objective=cfg.ObjectiveSpec(obj.name, obj.direction, obj.unit, obj.pattern),
        synthetic=cfg.SyntheticSpec(model, sigma, delay),
        **options,
    )
    store = stores.Store.create(
        storage or f"sqlite:///{tmp_path}/{name}.db", name, config, cfg.Budget(trials, seconds), heartbeat_s=None
    )
    kw = {}
    if clock is not None:
        store.now = clock.now
        kw = {"now": clock.now, "sleep": clock.sleep}
    evaluator = synthetic.SyntheticEvaluator(synthetic.model(model), obj, sigma, delay, seed, **kw)
    strat = strategies.make(strategy, sp, seed, strategy_options)
    return store, tuner.Tuner(store, evaluator, sp, obj, strat)


def synthetic_study(tmp_path, **kw):
    """(store, outcome, tuner) of a finished study."""
    store, t = make_study(tmp_path, **kw)
    return store, t.run(), t
