"""Namespace colours: distinct in one chart, the same for one ranking, never grey."""

from __future__ import annotations

import itertools

from core.views import palette
from tests.core.chart_support import GREYS, gpu, hand_summary, workload


def test_the_first_nine_of_any_ranking_get_nine_distinct_colours() -> None:
    names = [f"tenant-{i}" for i in range(40)]
    for start in range(0, 31, 3):
        ranking = names[start : start + 9]
        colours = palette.assign_colours(ranking, limit=9)
        assert list(colours) == ranking
        assert len(set(colours.values())) == 9
        assert set(colours.values()) <= set(palette.PALETTE)


def test_a_namespace_takes_its_own_colour_unless_a_larger_one_has_it() -> None:
    names = [f"ns-{i}" for i in range(200)]
    first, second = next(
        (a, b) for a, b in itertools.combinations(names, 2)
        if palette.preferred_colour(a) == palette.preferred_colour(b)
    )  # fmt: skip
    colours = palette.assign_colours([first, second])
    assert colours[first] == palette.preferred_colour(first)
    after = palette.PALETTE.index(colours[first]) + 1
    assert colours[second] == palette.PALETTE[after % len(palette.PALETTE)]
    assert palette.assign_colours([second, first])[second] == palette.preferred_colour(second)


def test_colours_depend_on_the_ranking_only() -> None:
    ranking = ["ml-training", "llm-serving", "team-a", "team-b"]
    assert palette.assign_colours(ranking) == palette.assign_colours(list(ranking))
    assert palette.assign_colours(ranking, limit=2) == dict(
        itertools.islice(palette.assign_colours(ranking).items(), 2)
    )


def test_no_namespace_colour_is_one_of_the_greys() -> None:
    assert not set(palette.PALETTE) & GREYS
    assert len(GREYS) == 5  # other, no pod series, fragments, free, not known


def test_ranking_is_largest_share_first_then_name() -> None:
    devices = [gpu("node-a", i, 0, 0) for i in range(4)]
    summary = hand_summary(
        devices,
        [
            workload("small", devices[0], 10, 1024),
            workload("large", devices[1], 90, 30000),
            workload("b-tie", devices[2], 40, 4096),
            workload("a-tie", devices[3], 40, 4096),
        ],
    )
    assert palette.namespace_ranking(summary) == ["large", "a-tie", "b-tie", "small"]
    assert palette.namespace_ranking(summary, extra=["quota-only"])[-1] == "quota-only"
