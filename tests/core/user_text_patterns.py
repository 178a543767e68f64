"""Every regular expression in ``bot`` and ``core``, and whether it reads user text.

User text is anything a person or a cluster can make up: pasted or uploaded metrics, Slack
messages, scraped expositions, label values, kubeconfig and registry fields, nvidia-smi output,
server replies. Patterns that read it must be linear by construction (checked in
``test_user_text_patterns``). A pattern is named ``module:NAME`` when it is assigned at module
level, and ``module:function`` when it is built or used inside a function; ``build`` gives a
representative compiled pattern for those built from arguments. A new pattern makes the
completeness test fail until it is listed here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

# How the code applies a pattern: anchored (one attempt) or searching (an attempt per position).
Method = Literal["match", "fullmatch", "search", "findall", "finditer", "sub", "split"]
SEARCHING: frozenset[Method] = frozenset({"search", "findall", "finditer", "sub", "split"})


@dataclass(frozen=True)
class UserTextPattern:
    method: Method
    reads: str  # what user text reaches it
    build: Callable[[], re.Pattern[str]] | None = None


def _row_pattern() -> re.Pattern[str]:
    from core.fast_reader import _row_pattern as build

    return build("hami_gpu_core_limit_ratio", ("device_uuid", "node", "zone"), (0, 1))


def _row_pattern_without_labels() -> re.Pattern[str]:
    from core.fast_reader import _row_pattern as build

    return build("hami_gpu_core_limit_ratio", (), ())


def _family_line_pattern() -> re.Pattern[str]:
    from core.fast_reader import _family_line_pattern as build

    return build("node_cpu_seconds")


def _unquoted_run() -> re.Pattern[str]:
    from core.exposition_lines import _unquoted_run as build

    return build("=,}")


METRICS = "pasted, uploaded or scraped metrics text"
SLACK = "Slack message text"
POD_TEXT = "pasted kubectl describe pod / get events text, and pod events from the API"

USER_TEXT: dict[str, UserTextPattern] = {
    "core.fast_reader:_NAME": UserTextPattern("match", METRICS),
    "core.fast_reader:_LABEL_PAIR": UserTextPattern("match", METRICS),
    "core.fast_reader:_COMMENT": UserTextPattern("fullmatch", METRICS),
    "core.fast_reader:_row_pattern": UserTextPattern("findall", METRICS, _row_pattern),
    "core.fast_reader:_row_pattern#no-labels": UserTextPattern(
        "findall", METRICS, _row_pattern_without_labels
    ),
    "core.fast_reader:_AFTER_BLOCK": UserTextPattern("findall", METRICS),
    "core.fast_reader:_family_line_pattern": UserTextPattern(
        "findall", METRICS, _family_line_pattern
    ),
    "core.exposition:_BLOCK_RE": UserTextPattern("fullmatch", METRICS),
    "core.exposition:_NAME_RE": UserTextPattern("fullmatch", METRICS),
    "core.exposition:_NAME_PART_RE": UserTextPattern("fullmatch", METRICS),
    "core.exposition:_PAIR_PARTS": UserTextPattern("findall", METRICS),
    "core.exposition_lines:_ESCAPE_RE": UserTextPattern("sub", METRICS),
    "core.exposition_lines:_LEGACY_NAME_RE": UserTextPattern("match", METRICS),
    "core.exposition_lines:_ASCII_BLANKS_RE": UserTextPattern("split", METRICS),
    "core.exposition_lines:_unquoted_run": UserTextPattern("match", METRICS, _unquoted_run),
    "core.line_limits:_QUOTED": UserTextPattern("finditer", METRICS),
    "core.command_errors:_COMMAND_ERROR": UserTextPattern("search", METRICS),
    "core.paste:_SUSPECT_LINE": UserTextPattern("search", METRICS),
    "core.paste:_SLACK_ENTITY": UserTextPattern("sub", METRICS),
    "core.paste:_BARE_AMPERSAND": UserTextPattern("search", METRICS),
    "core.paste:_QUOTE_MARKER": UserTextPattern("match", METRICS),
    "core.paste:_FENCE_LINE": UserTextPattern("fullmatch", METRICS),
    "core.paste:_SLACK_LINK": UserTextPattern("sub", METRICS),
    "core.paste:_PROMPT": UserTextPattern("match", METRICS),
    "core.paste:_COMMAND": UserTextPattern("match", METRICS),
    "core.paste:_METRIC_LIKE": UserTextPattern("match", METRICS),
    "core.realusage:_MEM_PAIR": UserTextPattern("fullmatch", "nvidia-smi output"),
    "core.realusage:_CSV_NUMBER": UserTextPattern("fullmatch", "nvidia-smi output"),
    "core.summary.workloads:_MEMORY_RESOURCE": UserTextPattern("search", "quota label values"),
    "core.summary.workloads:_CORE_RESOURCE": UserTextPattern("search", "quota label values"),
    "core.summary.filtered:_DIGITS": UserTextPattern("sub", "namespace and node names asked for"),
    "bot.conversation.parsing:_NAMESPACE": UserTextPattern("match", SLACK),
    "bot.conversation.parsing:_NODE": UserTextPattern("match", SLACK),
    "bot.conversation.parsing:_CLUSTER": UserTextPattern("match", SLACK),
    "bot.slack.incoming:_MENTION": UserTextPattern("sub", SLACK),
    "bot.slack.incoming:_SLACK_LINK": UserTextPattern("sub", SLACK),
    "bot.conversation.parsing:_CODE_FENCE": UserTextPattern("sub", SLACK),
    "bot.conversation.parsing:_SAMPLE": UserTextPattern("match", SLACK),
    "bot.conversation.parsing:_COMMENT": UserTextPattern("match", SLACK),
    "bot.conversation.parsing:_SINCE": UserTextPattern("match", SLACK),
    "bot.cli.chat:MENTION": UserTextPattern("sub", "chat input"),
    "bot.cli.gpu_hours:_SPAN": UserTextPattern("fullmatch", "command-line arguments"),
    "bot.clusters.hami_text:_LABEL_PAIR": UserTextPattern("findall", METRICS),
    "bot.clusters.hami_text:_SAMPLE_NAME": UserTextPattern("finditer", METRICS),
    "bot.clusters.prometheus:_SELECTOR_LABEL": UserTextPattern("findall", "registry selectors"),
    "bot.clusters.registry:_NAME": UserTextPattern("match", "registry fields"),
    "bot.clusters.registry:_NAMESPACE": UserTextPattern("match", "registry fields"),
    "bot.clusters.registry:_MATCHER": UserTextPattern("match", "registry selectors"),
    "bot.clusters.kube_errors:_HANDSHAKE": UserTextPattern("search", "API server replies"),
    "bot.clusters.kube_errors:_tls_reason": UserTextPattern("search", "TLS error text"),
    "bot.clusters.http_fetch:http_get": UserTextPattern("search", "Content-Type headers"),
    "bot.clusters.kube_scrape:read_proxied_body": UserTextPattern("search", "Content-Type headers"),
    "bot.slack.listeners.actions.__init__:SUMMARY_ACTION_IDS": UserTextPattern(
        "match", "action ids of button presses"
    ),
    "bot.slack.listeners.actions.__init__:HOME_ACTION_IDS": UserTextPattern(
        "match", "action ids of Home tab button presses"
    ),
    "bot.config:_SLACK_USER_ID": UserTextPattern("match", "admin user ids in settings"),
    "bot.slack.markup:_USER_ID": UserTextPattern("fullmatch", "user ids in answers"),
    "bot.slack.markup:_CHANNEL_ID": UserTextPattern("fullmatch", "channel ids in answers"),
    "bot.slack.markup:_GROUP_ID": UserTextPattern("fullmatch", "user group ids in answers"),
    "bot.slack.markup:_MARKER": UserTextPattern("sub", "answers quoting label values"),
    "core.fit_shape:_COMPACT": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_shape:_COUNT_ONLY": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_shape:_CORES": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_shape:_NUMBER": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_shape:_MEMORY": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_shape:_PERCENT": UserTextPattern("match", "GPU shapes typed in Slack"),
    "core.fit_slices:model_matches": UserTextPattern("split", "GPU models typed in Slack"),
    "core.pending.describe:_DESCRIBE_EVENT": UserTextPattern("match", POD_TEXT),
    "core.pending.describe:_GET_EVENT": UserTextPattern("match", POD_TEXT),
    "core.pending.describe:_GET_EVENT_WITH_NAMESPACE": UserTextPattern("match", POD_TEXT),
    "core.pending.describe:_SEEN": UserTextPattern("search", POD_TEXT),
    "core.pending.describe:_KEY_VALUE": UserTextPattern("match", POD_TEXT),
    "core.pending.describe:_QUANTITY": UserTextPattern("match", POD_TEXT),
    "core.pending.events:_CODED": UserTextPattern("match", POD_TEXT),
    "core.pending.events:_NO_NODE": UserTextPattern("match", POD_TEXT),
    "core.pending.events:_AVAILABLE": UserTextPattern("match", POD_TEXT),
    "core.pending.events:_ITEM": UserTextPattern("match", POD_TEXT),
    "core.pending.events:_ITEM_SEPARATOR": UserTextPattern("split", POD_TEXT),
    "core.pending.events:_LOG_LINE": UserTextPattern("search", POD_TEXT),
    "core.pending.events:_FRACTION": UserTextPattern("match", POD_TEXT),
    "bot.clusters.notify_fields:_CHANNEL": UserTextPattern("match", "registry fields"),
    "bot.clusters.notify_fields:_RULE_NAME": UserTextPattern("match", "registry fields"),
    "bot.clusters.notify_fields:_NAMESPACE": UserTextPattern("match", "registry fields"),
    "core.notify.values:_CLOCK": UserTextPattern("fullmatch", "registry fields"),
    "core.notify.values:_DURATION": UserTextPattern("fullmatch", "registry fields"),
    "bot.slack.listeners.actions.__init__:ALERT_ACTION_IDS": UserTextPattern(
        "match", "action ids of button presses"
    ),
    "core.views.spreadsheet:_CELL_STARTING_A_FORMULA": UserTextPattern(
        "search", "CSV text holding label values"
    ),
}

# Patterns that only read text this program wrote itself.
TRUSTED: dict[str, str] = {
    "bot.quickstart:_start_demo_exporter": "the first line the bundled demo exporter prints",
}

# Modules whose patterns are checked elsewhere: log redaction has its own structural and
# adversarial tests in tests/ops/test_redaction_linear.py.
NOT_COVERED = ("bot/ops/logging.py",)
