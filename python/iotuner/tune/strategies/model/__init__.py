"""The model strategy (`strategy`: Behzad et al., Cluster'15) and its empirical performance models (Behzad et al.,
Cluster'15, section IV): a
linear combination of basis terms, products of the numeric parameters with
exponents in {-1, 0, 1} and indicators of categorical ones, chosen by forward
selection; fitted, printed as an equation, saved and reused.

- `basis`: the candidate terms and their values;
- `fit`: forward selection with the model size chosen by cross-validation;
- `features`: a search space's points (and the problem size) as variables;
- `design`: training sets over a space's value lists;
- `rank`: every configuration predicted, the best k returned;
- `saved`: the model as a small JSON file, with its data, for warm starts.
- `data`: the study's measured points as the model's rows (each point's runs reduced, as a time);
- `warm_start`: a warm start: the saved model checked, its data reused, how well it predicted.

- `strategy`: the strategy `model` and its options (--training, --top-k, ...).

scikit-learn is imported by the model modules only, which the strategy
imports when it first fits, so `iotuner --help` never pays for it.
"""

from . import strategy  # noqa: F401  registers the strategy "model"
