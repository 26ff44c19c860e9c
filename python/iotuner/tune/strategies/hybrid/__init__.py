"""Two strategies after Isaila et al. (Cluster'15; docs/tuning.md, The hybrid model): `hybrid` (`top_k`),
the hybrid model's predicted top k (the model itself is `iotuner.perfmodel`), and `ml` (`ml`), their
black-box baseline (SVR over a balanced fractional design, `fraction`).
"""

from . import ml, top_k  # noqa: F401  register the strategies "ml" and "hybrid"
