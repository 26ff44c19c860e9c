"""The hybrid model of ROMIO's collective I/O (Isaila et al., Cluster'15; docs/tuning.md, The hybrid model).

A phase's time under a hint setting is predicted as the sum of its elementary operations' costs:
the operations are counted analytically from the phase's access pattern (the run report's `access`
section) and the hints, as ROMIO's generic driver would make them (`twophase`, `independent`); each
operation's cost is learned once per machine from micro-benchmarks (`iotuner calibrate`).

Two strategies: `hybrid` (`strategy`), the model's predicted top k, and `ml` (`ml`), Isaila et al.'s
black-box baseline (SVR over a balanced fractional design).
"""

from . import ml, strategy  # noqa: F401  register the strategies "ml" and "hybrid"
