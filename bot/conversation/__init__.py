"""Request handling shared by the Slack surfaces and ``hami-summary chat``.

Slack-independent: parse what a person asked (``parsing``), decide and compute the answer
(``service.Conversation``), and describe it as a ``replies.Reply`` for the surface to show.
"""
