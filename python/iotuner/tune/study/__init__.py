"""A study's storage, split along its concerns; `tune.store.Store` puts them together and is read through views.

- `records`: what one record of the study is (a search trial, a run of the default, a training run, a
  confirmation run), read from its stored attributes.
- `storage`: where records live (Optuna's RDB or in-memory storage) and the study's sessions; the study
  (search trials only) and its companion (the other records and the sessions); each change read once.
- `derive`: everything computed from the records, incrementally (pools, the default's runs, what was
  measured, the trajectory), and the views strategies read (`as_of`).
- `leases`: exclusive sections one worker runs while the others wait (the confirmation round, a
  strategy's training), with heartbeats, taken atomically in the storage.
- `views`: what readers use: `Trials` (what was run) and `Results` (what it measured);
- `coordination`: `Workers`, this worker among the others: `sessions` (the tuning clock), the sections
  (`leases`) and `recovery` of a dead worker's trials.
- `urls`: storage URLs without their passwords, for every line printed or written.
"""
