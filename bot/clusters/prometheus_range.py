"""Range queries (``GET /api/v1/query_range``): the HAMi scheduler families as they were.

A range query evaluates the same selector as the instant query (``build_query``) at every
``step`` from ``start`` to ``end`` and answers a matrix: per series, the values it had at each
evaluation time. Regrouped by time, each evaluation is an instant vector again, rebuilt into
the exposition the scheduler served then (``rebuild_exposition``), so a past state is
summarised exactly like the present one.

Prometheus answers a time with no sample within its lookback (5 minutes by default) with no
value for that series; a time at which no scheduler family has a value is left out (before the
retention, or while HAMi was not scraped).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.prometheus import (
    QUERIED_FAMILIES,
    build_query,
    has_scheduler_series,
    query_api,
    rebuild_exposition,
)
from bot.clusters.url_display import display_url

RANGE_PATH = "/api/v1/query_range"
# Prometheus refuses a range query of more points per series than this.
MAX_POINTS_PER_SERIES = 11_000


def _grid(start: float, end: float, step_seconds: float) -> int:
    if step_seconds <= 0 or end < start:
        raise ValueError(f"a range needs start <= end and a positive step, got {start}, {end}")
    return math.floor((end - start) / step_seconds) + 1


def _matrix(
    base_url: str,
    query: str,
    *,
    selector: str | None,
    start: float,
    end: float,
    step_seconds: float,
    label: str,
    deadline: Deadline,
) -> list[Mapping[str, Any]]:
    if _grid(start, end, step_seconds) > MAX_POINTS_PER_SERIES:
        raise ValueError(f"{_grid(start, end, step_seconds)} points per series is too many")
    data = query_api(
        base_url,
        RANGE_PATH,
        {
            "query": query,
            "start": f"{start:.3f}",
            "end": f"{end:.3f}",
            "step": f"{step_seconds:g}",
        },
        selector=selector,
        label=label,
        deadline=deadline,
    )
    if data.get("resultType") != "matrix":
        raise CollectionError(
            f"{label}: Prometheus at {display_url(base_url)} answered a range query with a "
            f"{data.get('resultType')!r} result instead of a matrix."
        )
    result = data.get("result") or []
    return [item for item in result if isinstance(item, Mapping)]


def _by_time(result: list[Mapping[str, Any]]) -> dict[float, list[dict[str, Any]]]:
    """The matrix as one instant vector per evaluation time."""
    vectors: dict[float, list[dict[str, Any]]] = {}
    for item in result:
        metric = item.get("metric") or {}
        for point in item.get("values") or ():
            if not isinstance(point, list | tuple) or len(point) != 2:
                continue
            try:
                moment = float(point[0])
            except (TypeError, ValueError):
                continue
            vectors.setdefault(moment, []).append({"metric": metric, "value": list(point)})
    return vectors


def fetch_range(
    base_url: str,
    selector: str | None,
    *,
    start: float,
    end: float,
    step_seconds: float,
    label: str,
    deadline: Deadline,
) -> list[tuple[float, str]]:
    """``(time, exposition)`` for each evaluation time with scheduler series, oldest first.

    Raises ``CollectionError`` when Prometheus cannot be reached or refuses the query.
    """
    result = _matrix(
        base_url,
        build_query(selector),
        selector=selector,
        start=start,
        end=end,
        step_seconds=step_seconds,
        label=label,
        deadline=deadline,
    )
    states = []
    for moment, vector in sorted(_by_time(result).items()):
        if has_scheduler_series(vector):
            states.append((moment, rebuild_exposition(vector, selector)))
    return states


def times_with_data(
    base_url: str,
    selector: str | None,
    *,
    start: float,
    end: float,
    step_seconds: float,
    label: str,
    deadline: Deadline,
) -> list[float]:
    """The evaluation times at which Prometheus holds any scheduler series, oldest first.

    One series comes back (a count), however large the cluster: a cheap way to find how far
    back the data reaches before fetching a whole state.
    """
    names = "|".join(QUERIED_FAMILIES)
    extra = f",{selector}" if selector else ""
    result = _matrix(
        base_url,
        f'count({{__name__=~"{names}"{extra}}})',
        selector=selector,
        start=start,
        end=end,
        step_seconds=step_seconds,
        label=label,
        deadline=deadline,
    )
    return sorted(_by_time(result))
