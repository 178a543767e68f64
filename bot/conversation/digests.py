"""``/hami-summary digests``: the digests of the clusters the asker may query, and when.

Clusters the asker may not query are left out entirely, as in every other answer. Listing
collects nothing: it reads the registry's schedules and when each digest was last posted.
"""

from __future__ import annotations

from datetime import datetime

from bot.conversation.context import Context
from bot.conversation.replies import MessageReply
from bot.conversation.rich import Line, Mention, Rich, Strong
from core.notify.schedule import next_slot
from core.views.changes_view import span_text

NONE_DECLARED = (
    "None of the clusters you may query here has a digest. An operator declares them in the "
    "cluster registry: `digests:` under a cluster, with `channel`, `at`, `time_zone` and "
    '`weekdays` (see docs/slack.md, "Digests and alerts").'
)


def digests_reply(ctx: Context, *, user: str | None, channel: str | None) -> MessageReply:
    """One line per digest of a cluster ``user`` may query in ``channel``."""
    now = ctx.state.now()
    lines: list[Line] = []
    for option in ctx.live.clusters_for(user, channel):
        for digest in option.digests:
            upcoming = next_slot(digest.schedule, now)
            local = datetime.fromtimestamp(upcoming.due_at, digest.schedule.zone)
            when = (
                f": {digest.describe()}. Next: {local:%a %Y-%m-%d %H:%M} "
                f"(in {span_text(upcoming.due_at - now)})"
            )
            last = ctx.notices.last_posted(option.name, digest.name)
            if last is not None:
                posted = datetime.fromtimestamp(last[1].at, digest.schedule.zone)
                late = " (late)" if last[1].late else ""
                when += f"; last posted {posted:%a %Y-%m-%d %H:%M}{late}"
            lines.append(
                ("• ", Strong(option.name), " to ", Mention("channel", digest.channel), when + ".")
            )
    if not lines:
        return MessageReply(NONE_DECLARED, title="No digests for you here")
    return MessageReply(Rich(tuple(lines)), title="Digests of the clusters you may query here")
