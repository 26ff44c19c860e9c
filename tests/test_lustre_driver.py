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
