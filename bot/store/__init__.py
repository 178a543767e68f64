"""State the bot keeps (thread metrics, event ids seen, picker choices, scrape cache, locks).

Everything goes through the small ``KeyValueStore`` protocol so that replicas can share one
Redis (``redis_store``) while local use keeps an in-process store (``memory``).
"""
