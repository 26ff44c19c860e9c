"""`iotuner simulate`: what an I/O phase would take at thousands of ranks, on a platform described in a file.

The phase's access pattern (a run report's `access` section, or a Darshan log's counters) is scaled to N ranks
(`workload`); the hybrid model counts ROMIO's operations for each settings document, in order, with who sends
to whom and which file offset each call touches (`trace`); SimGrid replays them as activities on a platform
of nodes, network links and storage targets (`engine`, native/src/simulate/iosim.cpp), where many aggregators
share OSTs and links. `platform` reads platform files and derives one from this machine's calibration.
docs/simulate.md says what is modelled, how it was validated and what is assumed.
"""
