"""What the bot posts unasked: digests on a schedule and alerts on a change of state.

Every replica runs the same loop (``loop.NotifyLoop``); leases in the shared store
(``lease.Lease``) make exactly one of them post each digest slot and evaluate each cluster's
alert rules, on the same scrape cache the answers use.
"""
