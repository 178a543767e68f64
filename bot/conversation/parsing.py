"""Reading what people type: slash-command arguments, thread follow-ups, and pasted metrics.

Everything here is pure text handling; nothing knows about Bolt or HTTP. Text arrives as the
person typed it: each surface undoes its own markup first (Slack's in ``bot.slack.incoming``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.conversation.fit_words import FIT_USAGE, FIT_WORD, split_fit
from core.errors import InputError
from core.fit_shape import Shape

# Kubernetes names: a namespace is a DNS-1123 label, a node name a DNS-1123 subdomain
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/).
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NODE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_CLUSTER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")

_CODE_FENCE = re.compile(r"^\s*+```[a-zA-Z]*+\s*+$|```")

# One exposition sample line: name, optional {labels}, a number (Prometheus text format 0.0.4).
# Every quantifier after the label set is possessive: a run of digits, blanks or exponent is
# taken whole and never given back, so a long number followed by junk fails in one pass
# (a plain "\d+\.?\d*" tries every split of the digits between its two runs: quadratic).
# The label set runs to the last '}' of the line: nothing after an earlier '}' can be a value
# alone, since the rest of the line would then hold a '}' too.
_SAMPLE = re.compile(
    r"^[A-Za-z_:][A-Za-z0-9_:]*+(\{(?:[^}\n]*+\})++)?+\s++"
    r"([-+]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][-+]?+[0-9]++)?+|[-+]?+Inf|NaN)"
    r"(?:\s++-?+[0-9]++)?+\s*+$"
)
_COMMENT = re.compile(r"^#\s++(HELP|TYPE)\s++[A-Za-z_:]")

HELP_WORDS = ("help", "?", "usage")


def strip_code_fences(text: str) -> str:
    """Drop Slack/Markdown ``` fences around pasted metrics, keeping what they enclose."""
    return _CODE_FENCE.sub("", text)


def looks_like_metrics(text: str) -> bool:
    """True when the text holds at least one exposition sample or HELP/TYPE line.

    Only a routing decision (paste or follow-up?); whether the samples are HAMi's is for
    ``core`` to say, with a specific message. A message that is only ``fit 4`` (where would a
    job of 4 whole GPUs go?) is the follow-up, though it has the shape of a sample named fit.
    """
    lines = [line.strip() for line in strip_code_fences(text).splitlines() if line.strip()]
    if len(lines) == 1 and lines[0].split()[0].lower() == FIT_WORD:
        return False
    return any(_COMMENT.match(line) or _SAMPLE.match(line) for line in lines)


def _lower_case_hint(value: str, pattern: re.Pattern[str], key: str) -> str:
    """`` Did you mean ns=team-a?`` when only capitals make ``value`` no Kubernetes name."""
    lowered = value.lower()
    return f" Did you mean {key}={lowered}?" if lowered != value and pattern.match(lowered) else ""


def _check_namespace(value: str) -> str:
    if not _NAMESPACE.match(value):
        raise InputError(
            f"'{value}' is not a Kubernetes namespace name (lower-case letters, digits and '-', "
            "at most 63 characters)."
            + (_lower_case_hint(value, _NAMESPACE, "ns") or " Example: ns=team-a")
        )
    return value


def _check_node(value: str) -> str:
    if not _NODE.match(value):
        raise InputError(
            f"'{value}' is not a Kubernetes node name (lower-case letters, digits, '-' and '.')."
            + (_lower_case_hint(value, _NODE, "node") or " Example: node=gpu-node-1")
        )
    return value


# -- slash command ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HelpCommand:
    pass


@dataclass(frozen=True, slots=True)
class PickerCommand:
    pass


@dataclass(frozen=True, slots=True)
class ClustersCommand:
    pass


@dataclass(frozen=True, slots=True)
class FleetCommand:
    """``fleet``: one line per cluster the asker may query, collected in parallel."""


@dataclass(frozen=True, slots=True)
class DigestsCommand:
    """``digests``: the digests of the clusters the asker may query, and when they post."""


@dataclass(frozen=True, slots=True)
class AdminCommand:
    """``admin [check]``: kubeconfig discovery and cluster access, for the bot's admins.
    ``check`` also asks each context's API server (``GET /version``)."""

    check: bool = False


@dataclass(frozen=True, slots=True)
class PodRef:
    """A pod as typed after ``why``: ``NAMESPACE/POD``, or ``POD`` (its namespace looked up)."""

    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


WHY_WORD = "why"
PENDING_WORD = "pending"


def parse_pod_ref(value: str) -> PodRef:
    """``ml/trainer-0`` or ``trainer-0``; ``InputError`` naming the value otherwise."""
    namespace, slash, name = value.partition("/")
    if not slash:
        namespace, name = "", value
    if not _NODE.match(name) or (slash and not _NAMESPACE.match(namespace)):
        raise InputError(
            f"'{value}' is not a pod: give it as NAMESPACE/POD or POD, in Kubernetes names "
            "(lower-case letters, digits, '-' and '.'), e.g. `why ml/trainer-0`."
        )
    return PodRef(name, namespace or None)


def split_why(words: list[str]) -> tuple[list[str], PodRef | None]:
    """The words without ``why POD``, and the pod (None when there is no ``why``). The first
    word is the cluster's name, whatever it is."""
    for index, word in enumerate(words[1:], start=1):
        if word.lower() == WHY_WORD:
            if index + 1 >= len(words):
                raise InputError("`why` needs the pending pod after it, e.g. `why ml/trainer-0`.")
            return words[:index] + words[index + 2 :], parse_pod_ref(words[index + 1])
    return words, None


@dataclass(frozen=True, slots=True)
class ClusterCommand:
    cluster: str
    context: str | None = None
    namespace: str | None = None
    node: str | None = None
    runtime: bool = False
    fresh: bool = False
    # Real usage: exec nvidia-smi in the pods with allocations; only where the
    # registry sets nvidia_smi_allowed for the cluster.
    usage: bool = False
    fit: Shape | None = None  # ``fit SHAPE``: where a job of that shape would be placed now
    # ``changes [since=1h]``: what changed since the kept snapshot of that long ago.
    changes: bool = False
    since_seconds: float | None = None
    # ``pending [ns=NS]``: the pods pending on HAMi's resources; ``why POD``: one pod's story.
    pending: bool = False
    why: PodRef | None = None
    # ``gpu-hours [since=24h] [ns=NS]``: GPU-hours per namespace over the kept snapshots.
    gpu_hours: bool = False


Command = (
    HelpCommand
    | PickerCommand
    | ClustersCommand
    | FleetCommand
    | DigestsCommand
    | AdminCommand
    | ClusterCommand
)

COMMAND_USAGE = (
    "/hami-summary <cluster> [ns=NAMESPACE] [node=NODE] [context=CONTEXT] [runtime] [usage] "
    f"[fresh] [{FIT_USAGE}] | <cluster> changes [since=1h|24h|7d] | <cluster> pending "
    "[ns=NAMESPACE] | <cluster> why NAMESPACE/POD | <cluster> gpu-hours [since=24h|7d|30d] "
    "[ns=NAMESPACE]"
)

# ``since=`` of ``changes``: a whole number of minutes, hours or days, up to the kept history.
_SINCE = re.compile(r"^([0-9]{1,5}+)(min|m|h|d)$")
_SINCE_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86_400}
MAX_SINCE_DAYS = 15  # ``changes``: the daily snapshots reach 14 days back
GPU_HOURS_MAX_SINCE_DAYS = 35  # ``gpu-hours``: the usage records are kept 35 days
DEFAULT_SINCE_SECONDS = 3600.0


def _since(value: str, gpu_hours: bool) -> float:
    return parse_since(value, GPU_HOURS_MAX_SINCE_DAYS if gpu_hours else MAX_SINCE_DAYS)


def parse_since(value: str, max_days: int = MAX_SINCE_DAYS) -> float:
    """``30m``, ``1h``, ``24h``, ``7d`` in seconds; ``InputError`` naming the value otherwise."""
    match = _SINCE.match(value.lower())
    seconds = int(match.group(1)) * _SINCE_UNITS[match.group(2)] if match else 0
    if not 0 < seconds <= max_days * 86_400:
        raise InputError(
            f"'since={value}' is not a time span I keep history for: use minutes, hours or days "
            f"up to {max_days} days, e.g. since=30m, since=24h or since=7d."
        )
    return float(seconds)


ADMIN_USAGE = "/hami-summary admin [check]"

# Words asking for real usage (nvidia-smi in the pods) rather than allocation only.
USAGE_WORDS = ("usage", "nvidia-smi")


def _word_command(
    words: list[str],
) -> HelpCommand | ClustersCommand | FleetCommand | DigestsCommand | AdminCommand | None:
    """The commands named by their first word (``help``, ``clusters``, ``fleet``, ``digests``,
    ``admin``), or None when the first word is a cluster's name."""
    head, rest = words[0].lower(), words[1:]
    if head == "digests" and not rest:
        return DigestsCommand()
    if head in HELP_WORDS:
        return HelpCommand()
    if head in ("clusters", "list"):
        if rest:
            raise InputError(f"'clusters' takes no arguments (got '{' '.join(rest)}').")
        return ClustersCommand()
    if head == "fleet":
        if rest:
            raise InputError(
                f"'fleet' takes no arguments (got '{' '.join(rest)}'); it shows every "
                "cluster you may query here, one line each."
            )
        return FleetCommand()
    if head == "admin":
        checks = [word.lower() for word in rest]
        if checks not in ([], ["check"]):
            raise InputError(
                f"'admin' takes only `check` (got '{' '.join(rest)}'). Usage: {ADMIN_USAGE}"
            )
        return AdminCommand(check=bool(checks))
    return None


def parse_command(text: str) -> Command:
    """Parse the text after ``/hami-summary``; raises ``InputError`` naming the bad word."""
    words = text.split()
    if not words:
        return PickerCommand()
    word_command = _word_command(words)
    if word_command is not None:
        return word_command
    if not _CLUSTER.match(words[0]) or "=" in words[0]:
        raise InputError(
            f"'{words[0]}' is not a cluster name. Usage: {COMMAND_USAGE}; "
            "`/hami-summary clusters` lists the clusters you may query here."
        )
    options: dict[str, str] = {}
    flags: set[str] = set()
    words, fit = split_fit(words)
    words, why = split_why(words)
    for word in words[1:]:
        key, sep, value = word.partition("=")
        key = key.lower()
        if sep:
            _read_option(word, key, value, options)
        elif key in ("runtime", "fresh"):
            flags.add(key)
        elif key in USAGE_WORDS:
            flags.add("usage")
        elif key in ("changes", PENDING_WORD, GPU_HOURS_WORD):
            flags.add(key)
        else:
            raise InputError(
                f"Unknown word '{word}'. Usage: {COMMAND_USAGE} (options are key=value)."
            )
    _check_gpu_hours(flags, options, fit is not None or why is not None)
    _check_changes(flags, options)
    why = _check_pods(flags, options, fit is not None, why)
    since = options.get("since")
    return ClusterCommand(
        cluster=words[0],
        context=options.get("context"),
        namespace=options.get("namespace"),
        node=options.get("node"),
        runtime="runtime" in flags,
        fresh="fresh" in flags,
        usage="usage" in flags,
        fit=fit,
        changes="changes" in flags,
        since_seconds=_since(since, GPU_HOURS_WORD in flags) if since is not None else None,
        pending=PENDING_WORD in flags,
        why=why,
        gpu_hours=GPU_HOURS_WORD in flags,
    )


def _check_pods(
    flags: set[str], options: dict[str, str], fit: bool, why: PodRef | None
) -> PodRef | None:
    """``pending`` and ``why`` read pods, not a summary: only context=, ns= and fresh go with
    them; ``why POD ns=NS`` is ``why NS/POD``."""
    asked = ([PENDING_WORD] if PENDING_WORD in flags else []) + ([WHY_WORD] if why else [])
    if not asked:
        return None
    extra = sorted(({"runtime", "usage", "changes"} & flags) | ({"node", "since"} & set(options)))
    extra += ["fit"] if fit else []
    extra += [WHY_WORD] if len(asked) == 2 else []
    if extra:
        raise InputError(
            f"`{asked[0]}` takes only context=, ns= and fresh (not {', '.join(extra)}). "
            "Examples: /hami-summary prod pending ns=ml, /hami-summary prod why ml/trainer-0"
        )
    namespace = options.get("namespace")
    if why is not None and namespace is not None:
        if why.namespace not in (None, namespace):
            raise InputError(
                f"`why {why}` names namespace {why.namespace} but ns={namespace} another: "
                "give one of them."
            )
        return PodRef(why.name, namespace)
    return why


def _read_option(word: str, key: str, value: str, options: dict[str, str]) -> None:
    """One ``key=value`` word of a cluster command into ``options``, checked."""
    if key in ("ns", "namespace"):
        options["namespace"] = _check_namespace(value)
    elif key == "node":
        options["node"] = _check_node(value)
    elif key in ("context", "ctx"):
        if not value:
            raise InputError("context= needs a value, e.g. context=prod-admin")
        options["context"] = value
    elif key == "since":
        options["since"] = value
    else:
        raise InputError(f"Unknown option '{word}'. Usage: {COMMAND_USAGE}")


GPU_HOURS_WORD = "gpu-hours"


def _check_gpu_hours(flags: set[str], options: dict[str, str], other_words: bool) -> None:
    """``gpu-hours`` reads the kept snapshots: only context=, since= and ns= go with it."""
    if GPU_HOURS_WORD not in flags:
        return
    extra = sorted({"runtime", "usage", "fresh", "changes", PENDING_WORD} & flags)
    extra += ["node"] if "node" in options else []
    extra += ["fit or why"] if other_words else []
    if extra:
        raise InputError(
            "`gpu-hours` counts the kept history and takes only context=, since= and ns= "
            f"(not {', '.join(extra)}). Example: /hami-summary prod gpu-hours since=7d"
        )


def _check_changes(flags: set[str], options: dict[str, str]) -> None:
    """``changes`` compares whole-cluster snapshots: filters and extra scrapes do not apply."""
    if GPU_HOURS_WORD in flags:
        return
    if "changes" not in flags:
        if "since" in options:
            raise InputError(f"since= goes with `changes`. Usage: {COMMAND_USAGE}")
        return
    extra = sorted(({"runtime", "usage", "fresh"} & flags) | ({"namespace", "node"} & set(options)))
    if extra:
        raise InputError(
            "`changes` compares the whole cluster and takes only context= and since= "
            f"(not {', '.join(extra)}). Example: /hami-summary prod changes since=24h"
        )


# -- thread follow-ups -----------------------------------------------------------------------

FollowUpAction = Literal[
    "summary",
    "gpus",
    "workloads",
    "csv",
    "chart",
    "help",
    "refresh",
    "usage",
    "changes",
    "pending",
    "why",
    "gpu-hours",
]

_ACTION_WORDS: dict[str, FollowUpAction] = {
    "summary": "summary",
    "gpus": "gpus",
    "gpu": "gpus",
    "devices": "gpus",
    "workloads": "workloads",
    "pods": "workloads",
    "csv": "csv",
    "chart": "chart",
    "png": "chart",
    "refresh": "refresh",
    "fresh": "refresh",
    "usage": "usage",
    "nvidia-smi": "usage",
    "changes": "changes",
    "diff": "changes",
    "pending": "pending",
    "gpu-hours": "gpu-hours",
    "help": "help",
    "?": "help",
}


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A request about the metrics already given in a thread (``ns team-a``, ``gpus`` ...)."""

    action: FollowUpAction = "summary"
    namespace: str | None = None
    node: str | None = None
    since_seconds: float | None = None  # ``changes since=24h``, ``gpu-hours since=7d``
    # ``all``: the whole cluster again, forgetting the filter the thread kept.
    clear: bool = False
    pod: PodRef | None = None  # ``why POD``


# Words that ask for the whole cluster again (the thread's filter is forgotten).
CLEAR_WORDS = ("all", "overview")

FOLLOW_UP_USAGE = (
    "`ns team-a`, `node gpu-node-1` (kept for the thread's follow-ups until `all`), `gpus`, "
    "`workloads`, `csv`, `chart`, `usage` (threads of a cluster summary), `fit 8xH100`, "
    "`changes` (since the previous paste, or `since=24h` for a cluster), `pending`, "
    "`why NAMESPACE/POD` (a cluster's pending pods), `gpu-hours [since=7d]` (a cluster's "
    "kept history), `help`"
)


def parse_follow_up(text: str) -> FollowUp | None:
    """The follow-up in ``text``, or None when it is not one (so it may be a question).

    Raises ``InputError`` for a follow-up with a bad name in it (``ns Team_A``).
    """
    words = text.split()
    if not words or len(words) > 6:
        return None
    action: FollowUpAction | None = None
    namespace: str | None = None
    node: str | None = None
    since_text: str | None = None
    clear = False
    pod: PodRef | None = None
    index = 0
    while index < len(words):
        word = words[index]
        key, sep, value = word.partition("=")
        key = key.lower()
        if key == WHY_WORD and not sep and action is None:
            if index + 1 >= len(words):
                raise InputError("`why` needs the pending pod after it, e.g. `why ml/trainer-0`.")
            index += 1
            action, pod = "why", parse_pod_ref(words[index])
        elif key in ("ns", "namespace", "node"):
            if not sep:
                if index + 1 >= len(words):
                    raise InputError(f"'{word}' needs a name after it, e.g. `{key} team-a`.")
                index += 1
                value = words[index]
            if key == "node":
                node = _check_node(value)
            else:
                namespace = _check_namespace(value)
        elif key == "since" and sep:
            since_text = value
        elif sep:
            return None
        elif key in CLEAR_WORDS and not clear:
            clear = True
        elif key in _ACTION_WORDS and action is None:
            action = _ACTION_WORDS[key]
        else:
            return None
        index += 1
    if since_text is not None and action not in ("changes", "gpu-hours"):
        raise InputError("since= goes with `changes` or `gpu-hours`, e.g. `changes since=24h`.")
    since = _since(since_text, action == "gpu-hours") if since_text is not None else None
    if clear and (namespace is not None or node is not None):
        raise InputError(
            "`all` is the whole cluster, without a filter: ask `all`, or `ns NAME` / "
            "`node NAME` alone."
        )
    return FollowUp(
        action=action or "summary",
        namespace=namespace,
        node=node,
        since_seconds=since,
        clear=clear,
        pod=pod,
    )
