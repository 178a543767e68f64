"""The words of ``help``: usage, examples, and what the numbers mean."""

from __future__ import annotations

from bot.conversation.parsing import COMMAND_USAGE, FOLLOW_UP_USAGE
from bot.conversation.replies import MessageReply

ALLOCATION_NOTE = (
    "The numbers are HAMi's scheduler *allocation* state (vGPU core shares and GPU memory handed "
    "out to pods), not live GPU utilisation. 100 cores = one whole GPU; memory is in MiB."
)


def help_reply() -> MessageReply:
    text = "\n".join(
        [
            "*Summarise how HAMi shares out your GPUs.*",
            "",
            "*Slash command*",
            "• `/hami-summary` — pick a registered cluster (and context, optional namespace), "
            "then Confirm. Nothing is collected before you confirm.",
            f"• `{COMMAND_USAGE}` — summary of one cluster; `runtime` adds vGPU monitor usage, "
            "`fresh` skips the cache.",
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
