"""Every threshold of a summary in one typed object, with the documented defaults.

Operators override them in configuration; tests use the defaults. The types are frozen
dataclasses; a changed copy comes from ``dataclasses.replace``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar


@dataclass(frozen=True, slots=True)
class Thresholds:
    # A GPU dimension at or above this share of its limit is saturated; a GPU with all its
    # cores allocated and its memory saturated is "full".
    saturation_percent: float = 99.0
    # Namespace classes. Size: a dominant tenant holds at least this share of the allocated
    # cores and of the allocated memory; otherwise its footprint (the largest of its shares of
    # the cluster's cores, memory and GPUs) makes it major, medium or small.
    dominant_percent: float = 50.0
    major_tenant_percent: float = 10.0
    small_tenant_percent: float = 1.0
    # Shape: whole GPUs, fractions of GPUs or memory only, when that kind is at least this
    # share of the namespace's allocations; otherwise mixed.
    shape_majority_percent: float = 80.0
    # Quota use at or above this share of a limit is marked, and listed before the others.
    near_quota_percent: float = 90.0
    # Distribution: concentrated when half of the allocated cores sit on at most this share of
    # the GPUs; fragmented when at least this many GPUs are partly allocated and hold at least
    # this share of the free cores.
    concentrated_gpu_percent: float = 20.0
    fragmented_min_partial_gpus: int = 2
    fragmented_free_on_partial_percent: float = 50.0
    # Tolerances of the consistency checks: differences up to these are rounding, not faults.
    check_cores: float = 1.0
    check_mem_mib: float = 1.0
    check_ratio: float = 0.01
    # Real-usage classes: idle below both idle figures; else by memory efficiency, high from
    # the high figure, normal from the normal one, low / over-allocated below.
    idle_utilization_percent: float = 5.0
    idle_mem_percent: float = 10.0
    high_utilization_percent: float = 80.0
    normal_utilization_percent: float = 40.0
    # A host GPU at or above this temperature is hot: close to the slowdown temperature
    # nvidia-smi -q reports ("GPU Slowdown Temp", in the 90s °C on the cards of public output),
    # where the driver starts cutting clocks.
    hot_temperature_celsius: float = 85.0


@dataclass(frozen=True, slots=True)
class Limits:
    # Largest metrics file or live scrape summarised. The scheduler of a 10,000-node cluster
    # with 8 GPUs and about 9 pods a node writes about 150 MB (``hami-summary simulate --nodes
    # 10000 --gpus-per-node 8``); 256 MiB leaves it 1.8x. Pastes in Slack and in the chat keep
    # the bot's smaller file limit (``BotConfig.max_file_bytes``).
    max_input_bytes: int = 256 * 1024 * 1024
    top_rows: int = 20


@dataclass(frozen=True, slots=True)
class History:
    """How much summary history is kept per cluster (``core.history.retention``).

    The recent tier keeps up to ``recent_snapshots`` snapshots at least ``min_spacing_minutes``
    apart; the daily tier keeps the first snapshot of each of the last ``daily_days`` UTC days.
    """

    recent_snapshots: int = 48
    min_spacing_minutes: float = 10.0
    daily_days: int = 14
    # GPU-hours: each recorded snapshot's usage part (``snapshot.usage_part``) is kept this
    # many days, so a 30-day report counts every recorded snapshot.
    usage_days: int = 35


ANY_MODEL = "*"
MAX_CURRENCY_CHARS = 12


@dataclass(frozen=True, slots=True)
class Prices:
    """What one GPU-hour costs per GPU model (the device type as HAMi registers it, compared
    without regard to case); ``ANY_MODEL`` prices every model not named. Empty: no costs."""

    currency: str = ""
    per_gpu_hour: tuple[tuple[str, float], ...] = ()

    def of(self, model: str) -> float | None:
        """The price of one GPU-hour of ``model``, or None when none is set."""
        wanted = model.casefold()
        prices = {name.casefold(): price for name, price in self.per_gpu_hour}
        return prices.get(wanted, prices.get(ANY_MODEL))


@dataclass(frozen=True, slots=True)
class Settings:
    thresholds: Thresholds = Thresholds()
    limits: Limits = Limits()
    history: History = History()
    prices: Prices = Prices()


DEFAULT_SETTINGS = Settings()


class SettingsError(ValueError):
    """A configured threshold or limit is not usable; the message names the field."""


def settings_from_mapping(data: Mapping[str, Any], where: str = "settings") -> Settings:
    """Settings from a plain mapping (e.g. parsed YAML): ``{"thresholds": {...}, "limits":
    {...}, "history": {...}}``, each key a field of ``Thresholds`` / ``Limits`` / ``History``;
    anything left out keeps its default. Unknown keys and values of the wrong kind are refused
    with a message naming them."""
    unknown = set(data) - {"thresholds", "limits", "history", "prices"}
    if unknown:
        raise SettingsError(
            f"{where}: unknown section(s) {', '.join(sorted(unknown))}; "
            "expected thresholds, limits, history, prices"
        )
    thresholds = _section(Thresholds, data.get("thresholds") or {}, f"{where}: thresholds")
    limits = _section(Limits, data.get("limits") or {}, f"{where}: limits")
    history = _section(History, data.get("history") or {}, f"{where}: history")
    for name in ("recent_snapshots", "daily_days", "usage_days"):
        if getattr(history, name) < 1:
            raise SettingsError(f"{where}: history.{name} must be at least 1")
    prices = _prices(data.get("prices") or {}, f"{where}: prices")
    return Settings(thresholds=thresholds, limits=limits, history=history, prices=prices)


def _prices(values: Any, where: str) -> Prices:
    """``{"currency": "EUR", "per_gpu_hour": {"NVIDIA A100-PCIE-40GB": 2.9, "*": 1.1}}``."""
    if not isinstance(values, Mapping):
        raise SettingsError(f"{where} must be a mapping with currency and per_gpu_hour")
    unknown = set(values) - {"currency", "per_gpu_hour"}
    if unknown:
        raise SettingsError(
            f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}; "
            "known fields: currency, per_gpu_hour"
        )
    table = values.get("per_gpu_hour") or {}
    if not isinstance(table, Mapping):
        raise SettingsError(f"{where}.per_gpu_hour must map GPU models to prices")
    currency = values.get("currency", "")
    if table and not (
        isinstance(currency, str) and 0 < len(currency.strip()) <= MAX_CURRENCY_CHARS
    ):
        raise SettingsError(
            f"{where}.currency must name the currency of the prices (e.g. EUR, USD), "
            f"up to {MAX_CURRENCY_CHARS} characters"
        )
    per_gpu_hour = []
    for model, price in table.items():
        if not isinstance(model, str) or not model.strip():
            raise SettingsError(f"{where}.per_gpu_hour: a GPU model must be a name, got {model!r}")
        if (
            isinstance(price, bool)
            or not isinstance(price, int | float)
            or not 0 <= price < float("inf")
        ):
            raise SettingsError(
                f"{where}.per_gpu_hour[{model!r}] must be a number of 0 or more, got {price!r}"
            )
        per_gpu_hour.append((model.strip(), float(price)))
    return Prices(currency.strip() if table else "", tuple(per_gpu_hour))


_T = TypeVar("_T", Thresholds, Limits, History)


def _section(kind: type[_T], values: Any, where: str) -> _T:
    if not isinstance(values, Mapping):
        raise SettingsError(f"{where} must be a mapping of field: value")
    known = {f.name for f in fields(kind)}
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            raise SettingsError(
                f"{where}: unknown field {name!r}; known fields: {', '.join(sorted(known))}"
            )
        default = getattr(kind(), name)
        wants_int = isinstance(default, int)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingsError(f"{where}.{name} must be a number, got {value!r}")
        if wants_int and not float(value).is_integer():
            raise SettingsError(f"{where}.{name} must be a whole number, got {value!r}")
        if value < 0 or (name.endswith("_percent") and value > 100):
            limit = "between 0 and 100" if name.endswith("_percent") else "0 or more"
            raise SettingsError(f"{where}.{name} must be {limit}, got {value!r}")
        if name == "max_input_bytes" and value < 1:
            raise SettingsError(f"{where}.{name} must be at least 1, got {value!r}")
        changes[name] = int(value) if wants_int else float(value)
    return replace(kind(), **changes)
