"""``fit`` against placements worked out independently from the device table.

The oracle below restates HAMi's device filter and places jobs one at a time: slices are added
to a GPU one by one while it has room, and each job takes the N GPUs with the most room left
(largest-first, which is optimal for N distinct bins). It shares no code with ``core.fit``.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.fit import fit_shape
from core.fit_shape import Shape, parse_shape
from core.model import GpuSummary, SourceInfo
from core.simulate import simulate_exposition

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
T4 = "NVIDIA-Tesla T4"


# -- the oracle ------------------------------------------------------------------------------


def oracle_mem(shape: Shape, gpu: GpuSummary) -> float:
    if shape.mem_mib is not None:
        return shape.mem_mib
    percent = 100 if shape.mem_percent is None else shape.mem_percent
    return int(gpu.mem_limit_mib) * percent // 100


def oracle_cores(shape: Shape) -> int:
    if shape.cores is None and shape.mem_mib is None and shape.mem_percent is None:
        return 100
    return shape.cores or 0


def oracle_room(gpu: GpuSummary, shape: Shape, split: int | None) -> int:
    """Slices added one by one until HAMi's filter refuses the next."""
    if "incomplete" in gpu.flags or gpu.core_limit <= 0 or gpu.mem_limit_mib <= 0:
        return 0
    if shape.model is not None and shape.model.lower() not in gpu.device_type.lower():
        return 0
    cores, mem = oracle_cores(shape), oracle_mem(shape, gpu)
    free_cores, free_mem, tasks, used_cores = (
        gpu.free_cores,
        gpu.free_mem_mib,
        gpu.shared_count,
        gpu.core_allocated,
    )
    placed = 0
    while placed < 10_000:
        if split is not None and tasks >= split:
            break
        if free_mem + 1e-6 < mem or free_cores + 1e-6 < cores:
            break
        if cores == 100 and tasks > 0:
            break
        if cores == 0 and used_cores >= gpu.core_limit:
            break
        free_cores -= cores
        free_mem -= mem
        used_cores += cores
        tasks += 1
        placed += 1
    return placed


def oracle_jobs(rooms: list[int], n: int) -> int:
    rooms = list(rooms)
    jobs = 0
    while True:
        rooms.sort(reverse=True)
        if len(rooms) < n or rooms[n - 1] == 0:
            return jobs
        for i in range(n):
            rooms[i] -= 1
        jobs += 1


def oracle_fit(gpus: tuple[GpuSummary, ...], text: str) -> tuple[int, int]:
    """(nodes it fits on, placements) of the shape ``text``, by the oracle."""
    shape = parse_shape(text)
    rooms: dict[str, list[int]] = defaultdict(list)
    for gpu in gpus:
        rooms[gpu.node].append(oracle_room(gpu, shape, None))
    jobs = [oracle_jobs(node_rooms, shape.gpus) for node_rooms in rooms.values()]
    return sum(1 for j in jobs if j), sum(jobs)


def partly_used(gpu: GpuSummary, add_cores: float, add_mem: float) -> bool:
    if "incomplete" in gpu.flags or gpu.core_limit <= 0 or gpu.mem_limit_mib <= 0:
        return False
    used = gpu.core_allocated + add_cores > 1e-6 or gpu.mem_allocated_mib + add_mem > 1e-6
    left = gpu.free_cores - add_cores > 1e-6 or gpu.free_mem_mib - add_mem > 1e-6
    return used and left


def oracle_fragmented_after(gpus: list[GpuSummary], rooms: list[int], shape: Shape) -> int:
    """The fewest partly used GPUs on the node after one job, over every choice of GPUs."""
    eligible = [i for i, r in enumerate(rooms) if r > 0]
    best = None
    for chosen in combinations(eligible, shape.gpus):
        count = 0
        for i, gpu in enumerate(gpus):
            if i in chosen:
                count += partly_used(gpu, oracle_cores(shape), oracle_mem(shape, gpu))
            else:
                count += partly_used(gpu, 0, 0)
        best = count if best is None else min(best, count)
    assert best is not None
    return best


def check_against_oracle(gpus: tuple[GpuSummary, ...], shape: Shape, split: int | None) -> None:
    result = fit_shape(gpus, shape, split_count=split)
    by_node: dict[str, list[GpuSummary]] = defaultdict(list)
    for gpu in gpus:
        by_node[gpu.node].append(gpu)
    expected: dict[str, int] = {}
    expected_frag: dict[str, int] = {}
    for node, node_gpus in by_node.items():
        rooms = [oracle_room(g, shape, split) for g in node_gpus]
        jobs = oracle_jobs(rooms, shape.gpus)
        if jobs:
            expected[node] = jobs
            if shape.gpus <= 4:
                expected_frag[node] = oracle_fragmented_after(node_gpus, rooms, shape)
    got = {fit.node: fit.placements for fit in result.nodes}
    assert got == expected, shape.text
    assert result.placements == sum(expected.values())
    assert result.fits == bool(expected)
    assert (result.reason is None) == bool(expected)
    for fit in result.nodes:
        if fit.node in expected_frag:
            assert fit.fragmented_after == expected_frag[fit.node], (shape.text, fit.node)
        assert len(fit.chosen) == shape.gpus
        assert len({g.uuid for g in fit.chosen}) == shape.gpus
        by_uuid = {g.device_uuid: g for g in by_node[fit.node]}
        for chosen in fit.chosen:
            assert oracle_room(by_uuid[chosen.uuid], shape, split) > 0
    keys = [(fit.fragmented_after, fit.node) for fit in result.nodes]
    assert keys == sorted(keys)


SHAPES = (
    "1",
    "2",
    "4",
    "8",
    "1xH100",
    "2xH100",
    "8xH100",
    "4xA100",
    "2xT4",
    "2x50c/20GiB",
    "1x30c/10GiB",
    "3x0c/8GiB",
    "gpumem-percentage=50",
    "2 cores=25 gpumem-percentage=25",
    "1xA100 memory=30GiB",
    "1x100c/10GiB",
    "1xT4/4GiB",
)


@pytest.fixture(scope="module", params=[(20, 8, 1), (20, 8, 7), (40, 4, 3), (3, 2, 11)])
def simulated(request: pytest.FixtureRequest) -> tuple[GpuSummary, ...]:
    nodes, per_node, seed = request.param
    text = simulate_exposition(nodes, per_node, seed=seed)
    summary = summarize_text(text, SourceInfo(kind="file", label="simulated"))
    assert len({g.device_type for g in summary.gpus}) >= 2 or nodes < 5
    return summary.gpus


@pytest.mark.parametrize("split", [None, 3])
@pytest.mark.parametrize("text", SHAPES)
def test_simulated_clusters_match_the_oracle(
    simulated: tuple[GpuSummary, ...], text: str, split: int | None
) -> None:
    check_against_oracle(simulated, parse_shape(text), split)


def test_simulated_clusters_have_fitting_and_refused_shapes() -> None:
    """The parametrised comparison above is not vacuous: both outcomes occur."""
    text = simulate_exposition(20, 8, seed=1)
    gpus = summarize_text(text, SourceInfo(kind="file", label="sim")).gpus
    outcomes = {fit_shape(gpus, parse_shape(s)).fits for s in SHAPES}
    assert outcomes == {True, False}


# -- hand-made clusters ----------------------------------------------------------------------


def gpu(
    node: str,
    index: int,
    model: str = H100,
    *,
    cores: float = 0,
    mem: float = 0,
    limit: float = 81920,
    tasks: int | None = None,
    flags: tuple[str, ...] = (),
) -> GpuSummary:
    shared = tasks if tasks is not None else (1 if cores or mem else 0)
    return GpuSummary(
        node,
        index,
        f"GPU-{node}-{index}",
        model,
        100.0,
        cores,
        cores,
        limit,
        mem,
        mem / limit * 100,
        shared,
        shared,
        "idle" if not (cores or mem) else "partial",
        flags,
        max(100.0 - cores, 0.0),
        max(limit - mem, 0.0),
        (),
    )


def test_whole_gpus_need_all_on_one_node() -> None:
    gpus = (gpu("a", 0), gpu("a", 1), gpu("b", 0), gpu("b", 1), gpu("b", 2, cores=10, mem=1024))
    result = fit_shape(gpus, parse_shape("3xH100"))
    assert not result.fits
    assert result.reason is not None
    assert "is 2 (on a)" in result.reason and "needs 3 on one node" in result.reason
    assert result.closest == "2xH100 fits on a now."
    two = fit_shape(gpus, parse_shape("2xH100"))
    # a leaves no GPU partly used, b keeps its partly used GPU: a first.
    assert [(f.node, f.placements, f.fragmented_after) for f in two.nodes] == [
        ("a", 1, 0),
        ("b", 1, 1),
    ]


def test_best_first_prefers_filling_partly_used_gpus() -> None:
    gpus = (
        gpu("a", 0),
        gpu("a", 1),
        gpu("b", 0, cores=50, mem=40960),
        gpu("b", 1),
    )
    result = fit_shape(gpus, parse_shape("1x50c/40GiB"))
    assert [f.node for f in result.nodes] == ["b", "a"]
    assert result.nodes[0].fragmented_after == 0  # GPU 0 of b becomes full
    assert [g.index for g in result.nodes[0].chosen] == [0]
    assert result.nodes[1].fragmented_after == 1


def test_a_100_core_slice_wants_the_gpu_to_itself() -> None:
    # A memory-only task (0 cores) holds the GPU: cores are free, but HAMi refuses 100 cores.
    gpus = (gpu("a", 0, cores=0, mem=1024, tasks=1),)
    result = fit_shape(gpus, parse_shape("1x100c/10GiB"))
    assert not result.fits
    assert result.reason is not None and "no task on it" in result.reason
    assert fit_shape(gpus, parse_shape("1x99c/10GiB")).placements == 1


def test_a_0_core_slice_cannot_go_to_a_gpu_with_all_cores_allocated() -> None:
    gpus = (gpu("a", 0, cores=100, mem=10240),)
    result = fit_shape(gpus, parse_shape("1 memory=10GiB"))
    assert not result.fits
    assert result.reason is not None and "0-core slice" in result.reason


def test_split_count_limits_tasks_per_gpu() -> None:
    gpus = (gpu("a", 0, cores=10, mem=1024, tasks=2),)
    shape = parse_shape("1x10c/1GiB")
    assert fit_shape(gpus, shape).placements == 9  # 90 free cores: 9 slices of 10
    assert fit_shape(gpus, shape, split_count=4).placements == 2
    refused = fit_shape(gpus, shape, split_count=2)
    assert refused.reason is not None and "maximum of 2 tasks" in refused.reason


def test_memory_short_names_the_shortfall_and_the_best_gpu() -> None:
    gpus = (gpu("a", 0, mem=20480), gpu("b", 0, A100, mem=0, limit=40960))
    result = fit_shape(gpus, parse_shape("1x50c/70GiB"))
    assert not result.fits
    assert result.reason == (
        "memory per GPU short by 10.0 GiB (largest free memory on one GPU: 60.0 GiB, on a)."
    )
    assert result.closest is not None and "GPU 0 of a" in result.closest


def test_no_model_match_lists_the_models_present() -> None:
    gpus = (gpu("a", 0), gpu("a", 1, T4, limit=15360), gpu("b", 0, T4, limit=15360))
    result = fit_shape(gpus, parse_shape("1xV100"))
    assert not result.fits
    assert result.reason == (
        f"no GPU model matches 'V100'. Models here: {T4} (2 GPUs), {H100} (1 GPU)."
    )


def test_model_matches_parts_in_order_ignoring_case() -> None:
    gpus = (gpu("a", 0, A100), gpu("a", 1, "NVIDIA A100-PCIE-40GB", limit=40960))
    assert [m for m, _ in fit_shape(gpus, parse_shape("1xa100-80gb")).matched] == [A100]
    assert len(fit_shape(gpus, parse_shape("1xA100")).matched) == 2
    assert fit_shape(gpus, parse_shape("1x80GB-A100")).matched == ()


def test_incomplete_gpus_hold_nothing() -> None:
    gpus = (gpu("a", 0, flags=("incomplete",)),)
    result = fit_shape(gpus, parse_shape("1"))
    assert not result.fits
    assert result.reason is not None and "missing" in result.reason


def test_no_gpus_at_all_is_said() -> None:
    result = fit_shape((), parse_shape("1"))
    assert result.reason is not None and "no GPUs" in result.reason


# -- shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8xH100", Shape("8xH100", gpus=8, model="H100")),
        ("4", Shape("4", gpus=4)),
        ("2x50c/20GiB", Shape("2x50c/20GiB", gpus=2, cores=50, mem_mib=20480)),
        ("1xA100 memory=30GiB", Shape("1xA100 memory=30GiB", gpus=1, mem_mib=30720, model="A100")),
        ("gpumem-percentage=50", Shape("gpumem-percentage=50", mem_percent=50)),
        ("2 cores=50 gpumem=4096", Shape("2 cores=50 gpumem=4096", gpus=2, cores=50, mem_mib=4096)),
        ("1xA100-80GB/1.5GiB", Shape("1xA100-80GB/1.5GiB", model="A100-80GB", mem_mib=1536)),
        (
            "nvidia.com/gpu=3 nvidia.com/gpucores=30",
            Shape("nvidia.com/gpu=3 nvidia.com/gpucores=30", gpus=3, cores=30),
        ),
        ("1 mem=25%", Shape("1 mem=25%", mem_percent=25)),
    ],
)
def test_shapes_read(text: str, expected: Shape) -> None:
    assert parse_shape(text) == expected


def test_whole_gpu_needs_100_cores_and_all_memory() -> None:
    shape = parse_shape("2xH100")
    assert shape.whole_gpu and shape.cores_per_gpu == 100
    assert shape.mem_needed_mib(81559.0) == 81559
    assert parse_shape("1x30c").mem_needed_mib(40960) == 40960  # HAMi: all memory by default
    assert parse_shape("1 memory=1GiB").cores_per_gpu == 0  # HAMi's defaultCores


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "it is empty"),
        ("0xH100", "GPU count '0' must be a whole number from 1"),
        ("2x150c", "cores '150' must be a whole percent"),
        ("2x50", "'50' has no unit"),
        ("2x50%", "could be cores or memory"),
        ("2xH100 foo", "'foo' is not key=value"),
        ("2 colour=red", "unknown key 'colour'"),
        ("2 memory=lots", "memory 'lots' is not a size"),
        ("2 memory=0GiB", "must be more than 0"),
        ("2x10GiB memory=1GiB", "memory is given twice"),
        ("2 gpumem=1024 gpumem-percentage=5", "not both"),
        ("1xH100/A100", "the GPU model is given twice"),
        ("1 gpumem-percentage=0", "from 1 to 100"),
    ],
)
def test_bad_shapes_say_what_and_show_examples(text: str, said: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_shape(text)
    assert said in caught.value.message
    assert "Examples: `8xH100`, `2x50c/20GiB`" in caught.value.message


def test_compact_form_round_trips() -> None:
    for text in ("8xH100", "2x50c/20GiB", "4", "1xA100/1536MiB", "2x25c gpumem-percentage=25"):
        shape = parse_shape(text)
        assert parse_shape(shape.compact()) == Shape(
            shape.compact(), shape.gpus, shape.cores, shape.mem_mib, shape.mem_percent, shape.model
        )


@pytest.mark.slow
@pytest.mark.parametrize("text", ["8xH100", "2x50c/20GiB", "1xA100 memory=30GiB", "4"])
def test_thousand_node_cluster_matches_the_oracle(text: str) -> None:
    summary = summarize_text(
        simulate_exposition(1000, 8, seed=4), SourceInfo(kind="file", label="simulated")
    )
    assert len(summary.gpus) == 8000
    check_against_oracle(summary.gpus, parse_shape(text), None)
