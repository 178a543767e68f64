"""The report's first GPU and workload rows are exactly what ordering every row would give.

``first_gpus`` and ``largest_workloads`` skip rows that cannot be among the first; these
properties compare them with ``heapq.nsmallest`` over every row, ties and all.
"""

from __future__ import annotations

from heapq import nsmallest

from hypothesis import strategies as st

from core.model import GpuState, GpuSummary, Workload
from core.views.tables import _gpu_order, _workload_order, first_gpus, largest_workloads
from tests.support.properties import quick_and_full

STATES: list[GpuState] = ["idle", "partial", "full", "inconsistent"]
FLAG_SETS = [(), ("shared",), ("overcommitted",), ("shared", "overcommitted"), ("exclusive",)]


def _gpu(node: int, index: int, state: GpuState, flags: tuple[str, ...]) -> GpuSummary:
    return GpuSummary(
        f"node-{node}", index, f"GPU-{node}-{index}", "NVIDIA L4", 100.0, 50.0, 50.0,
        1000.0, 500.0, 50.0, 1, 1, state, flags, 50.0, 500.0, (),
    )  # fmt: skip


gpu_lists = st.lists(
    st.tuples(
        st.integers(0, 5), st.integers(0, 3), st.sampled_from(STATES), st.sampled_from(FLAG_SETS)
    ),
    max_size=60,
)


def _first_gpus_are_the_smallest_by_interest(rows: list[tuple], top: int) -> None:
    gpus = [_gpu(*row) for row in rows]
    expected = gpus if len(gpus) <= top else nsmallest(top, gpus, key=_gpu_order)
    assert first_gpus(gpus, top) == expected


(
    test_first_gpus_are_the_smallest_by_interest,
    test_first_gpus_are_the_smallest_by_interest_in_full,
) = quick_and_full(300, gpu_lists, st.integers(0, 70))(_first_gpus_are_the_smallest_by_interest)


workload_lists = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["p1", "p2", "p3"]),
        st.sampled_from([0.0, 10.0, 25.0, 100.0]),
        st.sampled_from([0.0, 512.0, 1024.0]),
    ),
    max_size=60,
)


def _largest_workloads_are_the_smallest_by_size(rows: list[tuple], top: int) -> None:
    workloads = [
        Workload(ns, pod, str(i), "node", f"GPU-{i}", cores, mem, False, False, False)
        for i, (ns, pod, cores, mem) in enumerate(rows)
    ]
    assert largest_workloads(workloads, top) == nsmallest(top, workloads, key=_workload_order)


(
    test_largest_workloads_are_the_smallest_by_size,
    test_largest_workloads_are_the_smallest_by_size_in_full,
) = quick_and_full(300, workload_lists, st.integers(-1, 70))(
    _largest_workloads_are_the_smallest_by_size
)
