"""``/hami-summary digests``: the digests of the clusters the asker may query, and when.

Clusters the asker may not query are left out entirely, as in every other answer.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from bot.clusters.registry import ClusterRegistry
from bot.conversation.replies import MessageReply
from bot.notify.records import NotifyRecords
from bot.slack.markup import mention_channel
from core.notify.schedule import next_slot
from core.views.changes_view import span_text

NONE_DECLARED = (
    "None of the clusters you may query here has a digest. An operator declares them in the "
    "cluster registry: `digests:` under a cluster, with `channel`, `at`, `time_zone` and "
    '`weekdays` (see docs/slack.md, "Digests and alerts").'
)


def digests_reply(
    registry: ClusterRegistry, records: NotifyRecords, visible: Collection[str], now: float
) -> MessageReply:
    lines = []
    for entry in registry.entries:
        if entry.name not in visible:
            continue
        for digest in entry.digests:
            upcoming = next_slot(digest.schedule, now)
            local = datetime.fromtimestamp(upcoming.due_at, digest.schedule.zone)
            line = (
                f"• *{entry.name}* to {mention_channel(digest.channel)}: "
                f"{digest.schedule.describe()}. Next: {local:%a %Y-%m-%d %H:%M} "
                f"(in {span_text(upcoming.due_at - now)})"
            )
            last = records.last_posted(entry.name, digest.name)
            if last is not None:
                posted = datetime.fromtimestamp(last[1].at, digest.schedule.zone)
                late = " (late)" if last[1].late else ""
                line += f"; last posted {posted:%a %Y-%m-%d %H:%M}{late}"
            lines.append(line + ".")
    if not lines:
        return MessageReply(NONE_DECLARED, title="No digests for you here")
    return MessageReply("\n".join(lines), title="Digests of the clusters you may query here")
