"""Summary history: compact snapshots, what changed between two, and how many are kept.

``snapshot`` reduces a ``Summary`` to the figures a comparison needs and serialises them;
``retention`` decides which snapshots of a cluster to keep; ``changes`` compares two snapshots
and renders the differences on one screen. All of it is pure: ``bot.store.history`` stores the
snapshots.
"""
