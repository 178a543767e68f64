"""The history of a cluster whose source is Prometheus: read back with range queries.

Prometheus keeps the scheduler's series itself, so nothing is recorded in the bot's store for
such a cluster; ``changes`` and the trend chart ask Prometheus for the past states instead:

* ``at_or_before(moment)``: the state at ``moment`` (one evaluation of a range query). When
  Prometheus holds nothing then (a shorter retention, HAMi not scraped yet), the oldest state
  it holds after ``moment``, found with a one-series count over the span first.
* ``usage_snapshots(since, until)``: the states of a GPU-hours report, one per step on a
  grid of whole steps (the same points whenever the report is asked): the stored history's
  spacing for short ranges, coarser so that no report reads more than ``USAGE_POINTS``.
* ``snapshots()``: the same two tiers as the stored history (``core.settings.History``): up to
  ``recent_snapshots`` states ``min_spacing_minutes`` apart, and one per day for
  ``daily_days`` days. A query returns every series at every point, so the number of points
  asked for shrinks with the size of the cluster (``SAMPLE_BUDGET``), the window staying the
  same.

Every state is summarised like a live collection and reduced to a ``Snapshot``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.prometheus_range import MAX_POINTS_PER_SERIES, fetch_range, times_with_data
from bot.clusters.registry import ClusterEntry
from bot.clusters.url_display import display_url
from core.api import summarize_text
from core.history.snapshot import Snapshot, snapshot_of
from core.model import SourceInfo
from core.settings import DEFAULT_SETTINGS, Settings

log = logging.getLogger("hami_summary.prometheus_history")

# Series x points one range query may ask for (about 50 MB of JSON for a 1,000-node cluster).
SAMPLE_BUDGET = 1_000_000
# Evaluation steps of the search for the oldest state after a moment.
SEARCH_POINTS = 200
SECONDS_PER_DAY = 86_400.0
# States one GPU-hours report reads at most (each is summarised like a collection): 24 h at
# the stored history's 10-minute spacing is 145; 7 days are read at 1 h, 30 days at 4 h.
USAGE_POINTS = 200
# Points one query reads while the cluster's size (series per state) is not known yet.
UNSIZED_POINTS = 10


# The steps a GPU-hours report reads at, in seconds: whole minutes and hours that divide a day.
USAGE_STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 14_400, 21_600, 43_200, 86_400)


def usage_step(span_seconds: float, spacing_seconds: float) -> float:
    """The step of a GPU-hours report over ``span_seconds``: the smallest of ``USAGE_STEPS``
    at least ``spacing_seconds`` (the stored history's) that keeps the report within
    ``USAGE_POINTS`` points (a day at most)."""
    wanted = max(spacing_seconds, span_seconds / (USAGE_POINTS - 1))
    return float(next((step for step in USAGE_STEPS if step >= wanted), USAGE_STEPS[-1]))


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")


class PrometheusHistory:
    """Past states of one Prometheus-sourced cluster (``entry.source_kind == "prometheus"``)."""

    def __init__(
        self,
        entry: ClusterEntry,
        *,
        settings: Settings = DEFAULT_SETTINGS,
        timeout_seconds: float | None = None,
        clock: Callable[[], float] = time.time,
        label: str | None = None,
    ) -> None:
        """``label`` names the source in messages (default: the registry's cluster name)."""
        if entry.prometheus_url is None:
            raise ValueError(f"cluster {entry.name} has no prometheus_url")
        self.entry = entry
        self.base_url = entry.prometheus_url
        self.settings = settings
        self.timeout_seconds = (
            timeout_seconds if timeout_seconds is not None else entry.timeout_seconds
        )
        self._clock = clock
        self._label = label or f'cluster "{entry.name}"'

    def _deadline(self) -> Deadline:
        return Deadline(self.timeout_seconds)

    def _snapshot(self, moment: float, text: str) -> Snapshot:
        fetched_at = datetime.fromtimestamp(moment, UTC)
        source = SourceInfo(
            kind="cluster",
            label=self.entry.display_name,
            cluster=self.entry.name,
            fetched_at=fetched_at,
        )
        return snapshot_of(summarize_text(text, source, settings=self.settings), moment)

    def _fetch(
        self, start: float, end: float, step_seconds: float, deadline: Deadline
    ) -> list[tuple[float, str]]:
        """``(time, exposition)`` of each evaluation of [start, end] with scheduler series."""
        return fetch_range(
            self.base_url,
            self.entry.prometheus_selector,
            start=start,
            end=end,
            step_seconds=step_seconds,
            label=self._label,
            deadline=deadline,
        )

    def _states(
        self, start: float, end: float, step_seconds: float, deadline: Deadline
    ) -> list[Snapshot]:
        fetched = self._fetch(start, end, step_seconds, deadline)
        return [self._snapshot(moment, text) for moment, text in fetched]

    def at_or_before(self, moment: float) -> Snapshot:
        """The state at ``moment``, else the oldest one after it; ``CollectionError`` when
        Prometheus holds none between ``moment`` and now."""
        deadline = self._deadline()
        found = self._states(moment, moment, 60.0, deadline)
        if found:
            return found[-1]
        earliest = self._earliest_data(moment, self._clock(), deadline)
        if earliest is not None:
            found = self._states(earliest, earliest, 60.0, deadline)
            if found:
                return found[-1]
        selector = self.entry.prometheus_selector
        matching = f" matching {{{selector}}}" if selector else ""
        raise CollectionError(
            f"Prometheus at {display_url(self.base_url)} has no HAMi scheduler series{matching} "
            f"between {_stamp(moment)} and now, so there is nothing to compare cluster "
            f"{self.entry.name} with. Its retention may be shorter than that, or it did not "
            "scrape the scheduler then: ask for a shorter span (since=1h)."
        )

    def _earliest_data(self, start: float, end: float, deadline: Deadline) -> float | None:
        """The first time after ``start`` at which Prometheus holds scheduler series, to the
        minute: a coarse count over the span, then a fine one over the step before the hit."""
        step = max(60.0, (end - start) / SEARCH_POINTS)
        for _ in range(2):
            times = times_with_data(
                self.base_url,
                self.entry.prometheus_selector,
                start=start,
                end=end,
                step_seconds=step,
                label=self._label,
                deadline=deadline,
            )
            if not times:
                return None
            if step <= 60.0:
                break
            start, end = max(start, times[0] - step), times[0]
            step = max(60.0, step / SEARCH_POINTS)
        return times[0]

    def _points(self, wanted: int, series: int) -> int:
        return max(2, min(wanted, SAMPLE_BUDGET // max(1, series)))

    def usage_snapshots(
        self, since: float, until: float, series_hint: int = 0
    ) -> tuple[list[Snapshot], float]:
        """The states of [``since``, ``until``] for a GPU-hours report, oldest first, and the
        step they were read at. The first point is at or before ``since`` (its state covers
        the start), the grid is of whole steps from the epoch. Raises ``CollectionError``."""
        step = usage_step(until - since, self.settings.history.min_spacing_minutes * 60.0)
        first = math.floor(since / step) * step
        last = math.floor(until / step) * step
        deadline = self._deadline()
        states: list[Snapshot] = []
        # Until one state shows how many series the cluster has, read a few points at a time.
        series = series_hint
        per_query = self._points(MAX_POINTS_PER_SERIES, series) if series else 1
        start = first
        while start <= last:
            end = min(last, start + (per_query - 1) * step)
            fetched = self._fetch(start, end, step, deadline)
            states += [self._snapshot(moment, text) for moment, text in fetched]
            series = max([series, *(text.count("\n") for _, text in fetched)])
            wanted = MAX_POINTS_PER_SERIES if series else UNSIZED_POINTS
            per_query = self._points(wanted, series)
            start = end + step
        return states, step

    def snapshots(self, series_hint: int = 0) -> list[Snapshot]:
        """The recent and daily states, oldest first. ``series_hint`` (the series of one
        state, e.g. of the current collection) sets how many points one query may hold.
        Raises ``CollectionError``."""
        policy = self.settings.history
        now = self._clock()
        deadline = self._deadline()
        spacing = max(60.0, policy.min_spacing_minutes * 60.0)
        recent = self._points(policy.recent_snapshots, series_hint)
        window = spacing * max(1, policy.recent_snapshots - 1)
        step = max(spacing, window / max(1, recent - 1))
        found = {s.taken_at: s for s in self._states(now - window, now, step, deadline)}
        if policy.daily_days > 1:
            days = self._points(policy.daily_days, series_hint)
            span = SECONDS_PER_DAY * (policy.daily_days - 1)
            day_step = max(SECONDS_PER_DAY, span / max(1, days - 1))
            start = now - span
            for snapshot in self._states(start, max(start, now - window), day_step, deadline):
                found.setdefault(snapshot.taken_at, snapshot)
        return [found[moment] for moment in sorted(found)]
