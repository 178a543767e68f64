"""Digests and alerts, pure: schedules, rule conditions, state changes and their wording.

Nothing here posts, stores or collects: ``bot.notify`` does that and asks these modules what is
due, what fires and what to say.
"""
