"""An alert rule's state from one evaluation to the next: pending, firing, resolved.

Each subject of a rule's condition is pending from the first evaluation that saw it; the rule
fires once some subject has been pending for the rule's ``for_seconds``, and resolves when no
subject is left. An evaluation that cannot tell (``None``) changes nothing, so a failed
collection never resolves an alert by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.notify.rules import Condition


@dataclass(frozen=True, slots=True)
class RuleState:
    firing: bool = False
    firing_since: float | None = None  # Unix seconds
    pending: Mapping[str, float] = field(default_factory=dict)  # subject -> in a bad way since
    details: tuple[str, ...] = ()  # why, per firing subject

    def to_json(self) -> dict[str, Any]:
        return {
            "firing": self.firing,
            "firing_since": self.firing_since,
            "pending": dict(self.pending),
            "details": list(self.details),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RuleState:
        """Raises ``KeyError``/``TypeError``/``ValueError`` for data of another shape."""
        since = data["firing_since"]
        pending = data["pending"]
        if not isinstance(pending, dict):
            raise TypeError("pending must be a mapping")
        return cls(
            firing=bool(data["firing"]),
            firing_since=None if since is None else float(since),
            pending={str(k): float(v) for k, v in pending.items()},
            details=tuple(str(d) for d in data["details"]),
        )


def advance(
    state: RuleState, condition: Condition | None, now: float, for_seconds: float
) -> RuleState:
    """The state after an evaluation at ``now`` that found ``condition``."""
    if condition is None:
        return state
    pending = {subject: state.pending.get(subject, now) for subject in condition}
    ripe = [s for s in sorted(condition) if now - pending[s] >= for_seconds]
    firing = bool(ripe)
    if firing and state.firing and state.firing_since is not None:
        since: float | None = state.firing_since
    else:
        since = now if firing else None
    return RuleState(firing, since, pending, tuple(condition[s] for s in ripe))
