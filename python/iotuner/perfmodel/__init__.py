"""The hybrid model of ROMIO's collective I/O (Isaila et al., Cluster'15; docs/tuning.md, The hybrid model).

A phase's time under a hint setting is predicted as the sum of its elementary operations' costs: the
operations are counted analytically from the phase's access pattern (`pattern`, from the run report's
`access` section) and the hints (`romio_hints`), as ROMIO's generic driver would make them (`count`:
`twophase`, `independent`, `lustre`); each operation's cost is learned once per machine from
micro-benchmarks (`calibration`, `iotuner calibrate`); `predict` prices and ranks settings, `verify` checks
the counts against the runtime's counting mode.

Its users: the `hybrid` and `auto` strategies, `iotuner simulate` (which replays the counted operations),
`iotuner calibrate` and bench/. Importing it registers no strategy and loads no optional package.
"""
