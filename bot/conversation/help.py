"""The words of ``help``: usage, examples, and what the numbers mean."""

from __future__ import annotations

from collections.abc import Sequence

from bot.conversation.formatting import given_text
from bot.conversation.parsing import ADMIN_USAGE, COMMAND_USAGE, FOLLOW_UP_USAGE
from bot.conversation.replies import MessageReply
from bot.conversation.rich import Line, Rich, Span, Strong
from bot.store.state import ClusterTarget, ThreadSubject

ALLOCATION_NOTE = (Strong("Allocation"), ", not live utilisation; 100 cores = one GPU.")


REAL_USAGE_NOTE = (
    "`usage` adds ",
    Strong("real usage"),
    ": nvidia-smi run once in each pod with an allocation (point in "
    "time): GPU utilisation, memory used against HAMi's allocation, an efficiency class (idle, "
    "high, normal, low / over-allocated) and, per cause, the pods that could not be read. Only "
    "for clusters whose registry entry sets `nvidia_smi_allowed: true`; there, an allocation "
    "summary also has a ",
    Strong("Real usage"),
    " button. Follow-ups in the thread of a real-usage summary "
    "keep it, from the same reading while the cluster's cache is fresh (`refresh` reads again).",
)


def help_reply(admin_notes: Sequence[str] = ()) -> MessageReply:
    """``help``; ``admin_notes`` are access problems for whoever runs the bot."""
    admin: list[Line] = ["", Strong("For the bot's admin"), *(f"• {note}" for note in admin_notes)]
    text = Rich.of(
        Strong("Summarise how HAMi shares out your GPUs."),
        "",
        Strong("Slash command"),
        "• `/hami-summary` — pick a registered cluster (and context, optional namespace), "
        "then Confirm. Nothing is collected before you confirm.",
        f"• `{COMMAND_USAGE}` — summary of one cluster; `runtime` adds vGPU monitor usage, "
        "`usage` real usage from nvidia-smi, `fresh` skips the cache, `fit 8xH100` (or "
        "`fit 2x50c/20GiB`) says where a job of that shape would be placed now.",
        "• `/hami-summary clusters` — the clusters you may query in this channel.",
        "• `/hami-summary digests` — in Slack: the scheduled digests of those clusters, "
        "with their next and last post.",
        "• `/hami-summary fleet` — every cluster you may query here in one line each: "
        "GPUs, cores and memory allocated, free whole GPUs per model, firing alerts.",
        "• `/hami-summary <cluster> changes [since=1h|24h|7d]` — what changed since then, "
        "with a trend chart.",
        "• `/hami-summary <cluster> gpu-hours [since=24h|7d|30d] [ns=NAMESPACE]` — GPU-hours "
        "per namespace and GPU model (allocated cores / 100 x hours) over the kept history, "
        "with a CSV.",
        "• `/hami-summary <cluster> pending [ns=NAMESPACE]` — the pods waiting for HAMi's "
        "resources, grouped by HAMi's reason, longest waiting first.",
        "• `/hami-summary <cluster> why NAMESPACE/POD` — why that pod is pending: its "
        "request, HAMi's reasons in plain words, each checked against the allocation now.",
        (
            "• The bot's ",
            Strong("Home"),
            " tab — your clusters at a glance, with buttons for the summary, changes and `fit`.",
        ),
        "• `/hami-summary help` — this text.",
        f"• `{ADMIN_USAGE}` — for the bot's admins (Slack user ids in "
        "`HAMI_SUMMARY_ADMINS`): the kubeconfig files the bot can see (`KUBECONFIG_DIR`, "
        "default `~/.kube`) with their contexts, clusters, users and problems (never "
        "credentials), and who may query each registered cluster; `check` also asks each "
        "context's API server. Only you see the answer.",
        "",
        Strong("Pasted metrics"),
        "Mention me (or DM me) with HAMi `/metrics` text pasted in the message, or attach it "
        "as a `.prom`/`.txt` file or text snippet. I answer in the thread. Example: "
        "`@hami-summary` followed by the output of "
        "`curl -s http://<scheduler>:31993/metrics`.",
        (
            "You can also use the message shortcut ",
            Strong("Summarize HAMi metrics"),
            " on any message that contains metrics.",
        ),
        "Paste (or attach) a pending pod's `kubectl describe pod` output, or `kubectl get "
        "events` for it, and I say why it is pending; in a thread with metrics, checked "
        "against them.",
        "",
        (Strong("Follow-ups in the thread"), " (mention me in channels; just type in DMs)"),
        f"{FOLLOW_UP_USAGE} — they use the metrics last given in that thread (kept 24 h).",
        "",
        "Slash commands cannot be used inside threads (a Slack limit): in a thread, mention "
        "me instead.",
        "",
        ALLOCATION_NOTE,
        REAL_USAGE_NOTE,
        *(admin if admin_notes else []),
    )
    return MessageReply(title="hami-summary help", text=text)


def _follow_up_lines(
    *, cluster: bool | None, usage_allowed: bool = False, usage_kept: bool = False
) -> list[str]:
    """The follow-ups that work in a thread. ``cluster`` None: any thread (the general help);
    True/False: a thread about a registered cluster / about pasted metrics. ``usage_kept``:
    the thread's summary has real usage, which every follow-up keeps."""
    lines = [
        "• `ns team-a` — only namespace team-a   • `node gpu-node-1` — only that node; the "
        "filter stays for the thread's follow-ups until `all`",
        "• `gpus` — every GPU   • `workloads` — every pod allocation",
        "• `csv` — every table in full, as CSV and text files   • `chart` — who holds the "
        "GPUs and where there is room (PNG)",
        "• `summary` — the summary again   • `all` — the whole cluster, without the filter",
        "• `fit 8xH100`, `fit 2x50c/20GiB`, `fit 1xA100 memory=30GiB` — where a job of that "
        "shape would be placed now, or why it does not fit",
    ]
    if cluster is None:
        lines.append(
            "• `usage` — real usage from nvidia-smi (a cluster summary's thread, where the "
            "cluster allows it)"
        )
    elif cluster and usage_kept:
        lines.append("• `refresh` — scrape the cluster and run nvidia-smi in its pods again now")
    elif cluster:
        lines.append("• `refresh` — scrape the cluster again now")
        if usage_allowed:
            lines.append("• `usage` — real usage from nvidia-smi in the cluster's pods")
    return lines


def follow_up_help_reply() -> MessageReply:
    text = Rich.of(
        "In this thread you can ask about the metrics last given here:",
        *_follow_up_lines(cluster=None),
        "Or paste new metrics (or attach a .prom/.txt file) to start over.",
        "",
        ALLOCATION_NOTE,
    )
    return MessageReply(title="Follow-ups", text=text)


def _quoted(words: str, limit: int = 80) -> str:
    """What the person typed, safe to show back: no markup characters, at most ``limit``."""
    safe = " ".join(words.translate(str.maketrans("", "", "`*_~<>&")).split())
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def thread_subject_text(subject: ThreadSubject, *, age_seconds: float | None) -> tuple[Span, ...]:
    """The metrics a thread remembers, named with their source and age."""
    if isinstance(subject, ClusterTarget):
        context = f" (context `{subject.context}`)" if subject.context else ""
        extras = [
            what
            for what, wanted in (
                ("runtime (vGPU monitor) metrics", subject.runtime),
                ("real usage (nvidia-smi)", subject.usage),
            )
            if wanted
        ]
        with_extras = f" with {' and '.join(extras)}" if extras else ""
        return (
            "the live summary of cluster ",
            Strong(subject.cluster),
            f"{context}{with_extras}; follow-ups ask the cluster again (answered from the "
            "scrape cache while it is fresh)",
        )
    what: tuple[Span, ...] = (
        ("the file ", Strong(subject.label)) if subject.kind == "file" else ("metrics pasted here",)
    )
    when = f", {given_text(age_seconds)}" if age_seconds is not None else ""
    return (*what, f"{when} (kept 24 h)")


def not_understood_reply(
    words: str,
    subject: ThreadSubject,
    *,
    age_seconds: float | None,
    usage_allowed: bool = False,
) -> MessageReply:
    """Words that are not a follow-up, in a thread that does have metrics (so saying there are
    none would be wrong): what the thread has and the follow-ups that work on it."""
    cluster = isinstance(subject, ClusterTarget)
    text = Rich.of(
        (
            f"I did not understand “{_quoted(words)}” as a follow-up. This thread has ",
            *thread_subject_text(subject, age_seconds=age_seconds),
            ".",
        ),
        "Ask about them with one of these (mention me in channels; just type in DMs):",
        *_follow_up_lines(
            cluster=cluster,
            usage_allowed=usage_allowed,
            usage_kept=isinstance(subject, ClusterTarget) and subject.usage,
        ),
        "• `help` — what I can do",
        "Or paste new metrics (or attach a .prom/.txt file) to start over.",
    )
    return MessageReply(title="Not a follow-up I know", text=text, tone="problem")


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
