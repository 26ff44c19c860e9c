"""ROMIO's Lustre driver as the simulator counts its collective writes (perfmodel/lustre.py): how many aggregators
it keeps, stripe-cyclic domains (each aggregator writes its own OSTs, every round covers consecutive stripes),
its rounds, and reads left to the generic driver. There is no Lustre here: these check the model against the
driver's documented rules, not against a run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from iotuner.perfmodel import romio_hints, twophase
from iotuner.perfmodel.fileio import File
from iotuner.perfmodel.romio_hints import Hints

MIB = 1 << 20


class Recorder:
    """A trace that keeps every file call (rank, op, offset, bytes) and the collectives in order."""

    def __init__(self):
        self.files: list[tuple[int, str, int, int]] = []
        self.collectives: list[str] = []

    def collective(self, op: str, nbytes: int) -> None:
        self.collectives.append(op)

    def local(self, rank: int, op: str, nbytes: int, peer: int, offset: int) -> None:
        if op in ("pwrite", "pread"):
            self.files.append((rank, op, offset, nbytes))


def lustre_hints(ranks: int, per_node: int, cb_nodes: int, stripes: int, stripe: int, buffer: int) -> Hints:
    h = Hints.from_mapping(
        {
            "romio_cb_write": "enable",
            "romio_cb_read": "enable",
            "cb_nodes": str(cb_nodes),
            "cb_config_list": f"*:{per_node}",
            "cb_buffer_size": str(buffer),
            "striping_unit": str(stripe),
            "striping_factor": str(stripes),
        },
        ranks,
        per_node,
    )
    return replace(h, lustre=True)


@pytest.mark.parametrize(
    "cb_nodes, stripes, co_ratio, want",
    [
        (42, 20, 3, 40),  # the driver's own example: a multiple of the stripe count, at most co_ratio per OST
        (60, 20, 1, 20),
        (8, 60, 1, 6),  # the driver's other example: the largest divisor of the stripe count not above cb_nodes
        (96, 156, 1, 78),
        (3, 7, 1, 1),  # a prime stripe count above cb_nodes: one aggregator
        (512, 156, 1, 156),
    ],
)
def test_aggregators_divide_or_multiply_the_stripe_count(cb_nodes, stripes, co_ratio, want):
    assert romio_hints.lustre_aggregators(cb_nodes, stripes, co_ratio) == want


def test_each_aggregator_writes_its_own_stripes_and_every_round_spans_the_osts():
    """64 ranks writing 8 MiB each, contiguous, one call; 16 stripes of 1 MiB, 16 aggregators, 4 MiB buffers.
    The generic driver would give aggregator a the contiguous 32 MiB from 32a MiB: in each round all 16 would
    write the same 4 OSTs. The Lustre driver gives stripe s to aggregator s mod 16."""
    h = lustre_hints(64, 4, 16, 16, MIB, 4 * MIB)
    call = [[(r * 8 * MIB, 8 * MIB)] for r in range(64)]
    rec = Recorder()
    twophase.collective(call, h, "write", File(0), rec)
    writes = [(r, off, n) for r, op, off, n in rec.files if op == "pwrite"]
    assert not [f for f in rec.files if f[1] == "pread"]  # no holes: nothing read first
    assert sum(n for _, _, n in writes) == 512 * MIB
    aggregator_of = {rank: a for a, rank in enumerate(h.ranklist)}
    for r, off, n in writes:
        assert n == MIB and off % MIB == 0  # one aggregator's stripes never adjoin with 16 aggregators
        assert (off // MIB) % 16 == aggregator_of[r]
    # 512 stripes in rounds of 16 aggregators x 4 stripes: 8 rounds, each writing 64 consecutive stripes
    rounds = rec.collectives.count("alltoall") - 1  # the first is the offset lists'
    assert rounds == 8
    by_round = [sorted(off // MIB for _, off, _ in writes[64 * m : 64 * (m + 1)]) for m in range(8)]
    assert by_round == [list(range(64 * m, 64 * (m + 1))) for m in range(8)]


def test_one_stripe_per_round_at_least_and_holes_read_first():
    """A buffer below the stripe size still takes a whole stripe per round; blocks that leave a hole in a
    stripe make its aggregator read that stripe's written range first (read-modify-write), and only there."""
    h = lustre_hints(4, 4, 4, 4, MIB, 256 * 1024)
    call = [[(r * MIB, MIB)] for r in range(4)]
    call[3] = [(3 * MIB, MIB // 4), (3 * MIB + MIB // 2, MIB // 2)]  # a hole in stripe 3
    rec = Recorder()
    twophase.collective(call, h, "write", File(0), rec)
    assert rec.collectives.count("alltoall") - 1 == 1  # 4 stripes, 4 aggregators: one round
    reads = [(off, n) for _, op, off, n in rec.files if op == "pread"]
    assert reads == [(3 * MIB, MIB)]  # from the first to the last received byte of stripe 3
    assert sorted((off, n) for _, op, off, n in rec.files if op == "pwrite") == [
        (0, MIB),
        (MIB, MIB),
        (2 * MIB, MIB),
        (3 * MIB, MIB),
    ]


def test_reads_and_other_file_systems_keep_the_generic_driver():
    call = [[(r * 8 * MIB, 8 * MIB)] for r in range(64)]
    h = lustre_hints(64, 4, 16, 16, MIB, 4 * MIB)
    generic = replace(h, lustre=False)
    read = twophase.collective(call, h, "read", File(512 * MIB))
    assert read.ranks == twophase.collective(call, generic, "read", File(512 * MIB)).ranks
    assert (
        twophase.collective(call, h, "write", File(0)).ranks
        != twophase.collective(call, generic, "write", File(0)).ranks
    )
    assert generic.write_aggregators == 16 and replace(h, cb_nodes=12).write_aggregators == 8


def test_calls_counted_once_keep_the_aggregator_their_first_stripe_picks():
    """The counting memo reuses a call shaped like one counted before; on Lustre a call starting on another
    stripe hands its stripes to other aggregators, so the per-rank counts must still equal a call-by-call
    count. 5 ranks write 3 MiB per call (VPIC-IO's layout): call k starts on stripe 15k, 4 aggregators."""
    from iotuner.perfmodel.count import phase_ops
    from iotuner.simulate import workload

    pattern = workload.segmented("write", 4, 3 * MIB, 5)
    h = lustre_hints(5, 5, 4, 4, MIB, MIB)
    assert phase_ops(pattern, h).ranks == phase_ops(pattern, h, trace=Recorder()).ranks


def _counts(ops, rank: int, op: str) -> int:
    return sum(n for (o, _), n in ops.ranks[rank].items() if o == op)


@pytest.mark.parametrize(
    "buffer, rounds, writes",
    [
        # 1 MiB buffers: one stripe per aggregator per round, so 8 stripes / 2 aggregators = 4 rounds
        (MIB, 4, {0: [0, 2, 4, 6], 1: [1, 3, 5, 7]}),
        # 2 MiB buffers: two stripes per aggregator per round (stripes 0 and 2, not adjoining: two writes)
        (2 * MIB, 2, {0: [0, 2, 4, 6], 1: [1, 3, 5, 7]}),
    ],
)
def test_eight_stripes_three_aggregators_asked_hand_computed(buffer, rounds, writes):
    """8 ranks write 1 MiB each, rank r on stripe r (8 stripes of 1 MiB); cb_nodes 3 asked. By hand: 3 does not
    divide 8, so the driver keeps 2 (the largest divisor of 8 not above 3: each OST written by one aggregator),
    ranks 0 and 1 of the ranklist (0, 1, 2); stripe s goes to aggregator s mod 2; rank 2 writes nothing."""
    h = lustre_hints(8, 8, 3, 8, MIB, buffer)
    assert h.ranklist == (0, 1, 2) and h.write_aggregators == 2
    call = [[(r * MIB, MIB)] for r in range(8)]
    rec = Recorder()
    ops = twophase.collective(call, h, "write", File(0), rec)
    owners = {}
    for rank, op, off, n in rec.files:
        assert op == "pwrite" and n == MIB
        owners.setdefault(rank, []).append(off // MIB)
    assert {r: sorted(s) for r, s in owners.items()} == writes
    assert rec.collectives.count("alltoall") == 1 + rounds  # the offset lists', then one per round
    for agg in (0, 1):
        assert _counts(ops, agg, "pwrite") == 4
        # a 1 MiB piece from each rank of its 4 stripes (its own included), and its own piece sent
        assert ops.ranks[agg][("irecv", MIB)] == 4 and ops.ranks[agg][("isend", MIB)] == 1
    for r in range(2, 8):
        assert _counts(ops, r, "pwrite") == 0 and _counts(ops, r, "irecv") == 0
        assert ops.ranks[r][("isend", MIB)] == 1  # its one stripe, to one aggregator
        assert ops.ranks[r][("alltoall", 4)] == 1 + rounds


@pytest.mark.parametrize("co_ratio, aggregators, rounds", [(1, 8, 2), (2, 16, 1)])
def test_co_ratio_lets_two_aggregators_share_an_ost_hand_computed(co_ratio, aggregators, rounds):
    """16 ranks write 1 MiB each on 8 stripes of 1 MiB (16 stripes of the file, OST s mod 8), cb_nodes 16. By
    hand: co_ratio 1 keeps 8 aggregators (one per OST), each writing stripes a and a + 8 in 2 rounds; co_ratio 2
    keeps 16, stripe s to aggregator s, one round, OST k written by aggregators k and k + 8."""
    h = replace(lustre_hints(16, 16, 16, 8, MIB, MIB), co_ratio=co_ratio)
    assert h.write_aggregators == aggregators
    rec = Recorder()
    twophase.collective([[(r * MIB, MIB)] for r in range(16)], h, "write", File(0), rec)
    by_rank = {}
    for rank, _, off, _ in rec.files:
        by_rank.setdefault(rank, []).append(off // MIB)
    assert by_rank == {a: [s for s in range(16) if s % aggregators == a] for a in range(aggregators)}
    assert rec.collectives.count("alltoall") == 1 + rounds


def test_first_stripe_aligned_down_and_partial_stripes_written_as_received():
    """A call starting mid-stripe: the driver aligns its first round down to the stripe (the lock boundary), so
    the stripe the call starts on belongs to aggregator (offset // stripe) mod aggregators, and each aggregator
    writes only the bytes it received. 4 ranks write 1 MiB each from 2.5 MiB; 4 stripes of 1 MiB, 2 aggregators:
    stripes 2..6 touched, stripe 2 from 2.5 MiB (aggregator 0), stripe 6 up to 6.5 MiB (aggregator 0)."""
    h = lustre_hints(4, 4, 2, 4, MIB, MIB)
    half = MIB // 2
    call = [[(2 * MIB + half + r * MIB, MIB)] for r in range(4)]
    rec = Recorder()
    twophase.collective(call, h, "write", File(0), rec)
    assert sorted((off, n, rank) for rank, _, off, n in rec.files) == [
        (2 * MIB + half, half, 0),
        (3 * MIB, MIB, 1),
        (4 * MIB, MIB, 0),
        (5 * MIB, MIB, 1),
        (6 * MIB, half, 0),
    ]
    assert rec.collectives.count("alltoall") == 1 + 3  # stripes 2..6 in rounds of 2: {2,3}, {4,5}, {6}


class PwriteCounter:
    """A calibration that prices a pwrite at 1 s and everything else at nothing: a phase's predicted time is
    then the most pwrites any rank makes."""

    def cost(self, op: str, nbytes: int, **_) -> float:
        return 1.0 if op == "pwrite" else 0.0


def test_hybrid_model_counts_a_phase_on_lustre_with_the_driver():
    """A run report whose phase ran on ROMIO's Lustre driver (`mpiio_driver` lustre, as the runtime reads it
    back) is predicted with that driver's writes, the same counting simulate uses. VPIC-IO's recorded 2-rank
    run (8 calls of 1 MiB per rank) with its file on 4 stripes of 256 KiB, cb_nodes 2, collective buffering on:
    the generic driver gives each aggregator one contiguous 1 MiB domain a call (8 writes each); the Lustre
    driver gives it every other stripe (4 writes of 256 KiB a call, 32 each)."""
    import copy
    import json
    from pathlib import Path

    from iotuner.perfmodel import predict

    report = json.loads((Path(__file__).parent.parent / "bench" / "data" / "simulate-vpicio.json").read_text())
    hints = {"romio_cb_write": "enable", "cb_nodes": "2", "cb_config_list": "*:2"}
    layout = {"striping_unit": str(256 * 1024), "striping_factor": "4"}
    predicted = {}
    for driver in ("ufs", "lustre"):
        rep = copy.deepcopy(report)
        rep["phases"][0]["mpiio_driver"] = driver
        rep["phases"][0]["mpi_hints"].update(layout)
        (ph,) = predict.phases_of(rep)
        assert ph.lustre == (driver == "lustre")
        predicted[driver] = ph.time(PwriteCounter(), hints)
    assert predicted == {"ufs": 8.0, "lustre": 32.0}
