"""View submissions: the Home tab's fit form."""

from __future__ import annotations

from slack_bolt import App

from bot.ops.instrument import answers_later
from bot.slack.home_view import FIT_MODAL
from bot.slack.listeners.views.fit_form import answer_fit_form, check_fit_form


def register(app: App) -> None:
    app.view(FIT_MODAL)(ack=check_fit_form, lazy=[answers_later(answer_fit_form)])
