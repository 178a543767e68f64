"""The filter a thread's follow-ups keep: ``ns team-a`` sticks until ``all`` or a new filter.

A filter given in a thread (``ns team-a``, ``node gpu-node-7``, ``gpus ns team-a``, or a slash
command's ``ns=``) applies to every later follow-up there (``gpus``, ``workloads``, ``csv``,
``chart``, ``refresh``, ``fit``); ``all`` goes back to the whole cluster, and a new filter
replaces the old one whole (``node x`` after ``ns team-a`` is the node alone). A new paste of
metrics starts unfiltered. Buttons carry the filter of the message they are under.

Kept beside the thread's subject in the bot's store, with the same time to live; a filter that
named nothing (a mistyped name) is never kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.conversation.replies import Reply, TableReply
from bot.store import codec
from bot.store.state import BotState


@dataclass(frozen=True, slots=True)
class ThreadFilter:
    namespace: str | None = None
    node: str | None = None

    def __bool__(self) -> bool:
        return self.namespace is not None or self.node is not None

    def words(self) -> str:
        """``ns=team-a node=gpu-node-7`` as typed; empty without a filter."""
        parts = []
        if self.namespace is not None:
            parts.append(f"ns={self.namespace}")
        if self.node is not None:
            parts.append(f"node={self.node}")
        return " ".join(parts)


NO_FILTER = ThreadFilter()


def _key(state: BotState, channel: str, thread_ts: str) -> str:
    return state.thread_key("thread-filter", channel, thread_ts)


def thread_filter(state: BotState, channel: str, thread_ts: str) -> ThreadFilter:
    """The filter the thread's follow-ups keep; ``NO_FILTER`` when none (or it expired)."""
    payload = codec.decode("thread-filter", state.kv.get(_key(state, channel, thread_ts)))
    if payload is None:
        return NO_FILTER

    def name(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) and value else None

    return ThreadFilter(namespace=name("namespace"), node=name("node"))


def remember_thread_filter(
    state: BotState, channel: str, thread_ts: str, chosen: ThreadFilter
) -> None:
    """Keep ``chosen`` for the thread's follow-ups (no filter: forget the one kept)."""
    key = _key(state, channel, thread_ts)
    if not chosen:
        state.kv.delete(key)
        return
    value = codec.encode("thread-filter", {"namespace": chosen.namespace, "node": chosen.node})
    state.kv.put(key, value, state.thread_ttl_seconds)


def filter_for_follow_up(
    kept: ThreadFilter, namespace: str | None, node: str | None, clear: bool
) -> ThreadFilter:
    """The filter a follow-up asks about: the one it names (replacing the kept one whole),
    none after ``all``, else the one the thread keeps."""
    if namespace is not None or node is not None:
        return ThreadFilter(namespace, node)
    if clear:
        return NO_FILTER
    return kept


def whole_cluster_note(reply: Reply, kept: ThreadFilter) -> Reply:
    """``changes`` compares whole-cluster snapshots: under a thread's filter its title says
    that the filter does not apply."""
    if not kept or not isinstance(reply, TableReply):
        return reply
    return replace(
        reply,
        title=f"{reply.title}; the whole cluster (the thread's {kept.words()} is not applied)",
    )
