"""The words of ``help``: usage, examples, and what the numbers mean."""

from __future__ import annotations

from collections.abc import Sequence

from bot.conversation.parsing import COMMAND_USAGE, FOLLOW_UP_USAGE
from bot.conversation.replies import MessageReply

ALLOCATION_NOTE = (
    "The numbers are HAMi's scheduler *allocation* state (vGPU core shares and GPU memory handed "
    "out to pods), not live GPU utilisation. 100 cores = one whole GPU; memory is in MiB."
)


REAL_USAGE_NOTE = (
    "`usage` adds *real usage*: nvidia-smi run once in each pod with an allocation (point in "
    "time): GPU utilisation, memory used against HAMi's allocation, an efficiency class (idle, "
    "high, normal, low / over-allocated) and, per cause, the pods that could not be read. Only "
    "for clusters whose registry entry sets `nvidia_smi_allowed: true`."
)


def help_reply(admin_notes: Sequence[str] = ()) -> MessageReply:
    """``help``; ``admin_notes`` are access problems for whoever runs the bot."""
    admin = ["", "*For the bot's admin*", *(f"• {note}" for note in admin_notes)]
    text = "\n".join(
        [
            "*Summarise how HAMi shares out your GPUs.*",
            "",
            "*Slash command*",
            "• `/hami-summary` — pick a registered cluster (and context, optional namespace), "
            "then Confirm. Nothing is collected before you confirm.",
            f"• `{COMMAND_USAGE}` — summary of one cluster; `runtime` adds vGPU monitor usage, "
            "`usage` real usage from nvidia-smi, `fresh` skips the cache.",
            "• `/hami-summary clusters` — the clusters you may query in this channel.",
            "• `/hami-summary help` — this text.",
            "",
            "*Pasted metrics*",
            "Mention me (or DM me) with HAMi `/metrics` text pasted in the message, or attach it "
            "as a `.prom`/`.txt` file or text snippet. I answer in the thread. Example: "
            "`@hami-summary` followed by the output of "
            "`curl -s http://<scheduler>:31993/metrics`.",
            "You can also use the message shortcut *Summarize HAMi metrics* on any message that "
            "contains metrics.",
            "",
            "*Follow-ups in the thread* (mention me in channels; just type in DMs)",
            f"{FOLLOW_UP_USAGE} — they use the metrics last given in that thread (kept 24 h).",
            "",
            "Slash commands cannot be used inside threads (a Slack limit): in a thread, mention "
            "me instead.",
            "",
            ALLOCATION_NOTE,
            REAL_USAGE_NOTE,
            *(admin if admin_notes else []),
        ]
    )
    return MessageReply(title="hami-summary help", text=text)


def follow_up_help_reply() -> MessageReply:
    text = "\n".join(
        [
            "In this thread you can ask about the metrics last given here:",
            "• `ns team-a` — only namespace team-a   • `node gpu-node-1` — only that node",
            "• `gpus` — every GPU   • `workloads` — every pod allocation",
            "• `csv` — GPU and workload tables as CSV   • `chart` — allocation chart (PNG)",
            "• `summary` — the whole summary again",
            "• `usage` — real usage from nvidia-smi (a cluster summary's thread, where the "
            "cluster allows it)",
            "Or paste new metrics (or attach a .prom/.txt file) to start over.",
            "",
            ALLOCATION_NOTE,
        ]
    )
    return MessageReply(title="Follow-ups", text=text)


def no_metrics_reply() -> MessageReply:
    return MessageReply(
        title="No metrics here yet",
        text=(
            "I did not find HAMi metrics in that message, and this thread has none I remember "
            "(they are kept for 24 h). Paste the text of the HAMi scheduler's `/metrics` "
            "(lines like `hami_gpu_core_allocated_ratio{...} 50`), in a code block if you like, "
            "or attach it as a `.prom`/`.txt` file. Then ask: " + FOLLOW_UP_USAGE + "."
        ),
        tone="problem",
    )
