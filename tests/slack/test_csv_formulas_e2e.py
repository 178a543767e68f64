"""The CSV a Slack thread gets (the ``csv`` follow-up) never holds a live spreadsheet formula:
names that start one are quoted with ``'`` (signed requests in, the uploaded file read back
from the local Slack Web API)."""

from __future__ import annotations

import csv
import io

from tests.core.test_csv_formulas import FORMULA, hostile_names
from tests.slack.conftest import CHANNEL, RunningBot
from tests.slack.test_http_e2e import answer_in


def test_the_csv_follow_up_uploads_formula_names_quoted(bot: RunningBot) -> None:
    file = bot.api.add_private_file("hostile.prom", hostile_names().encode("utf-8"))
    _, root = bot.sender.mention("", files=[file])
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention("csv", thread_ts=root)
    bot.api.wait_for(
        "files.completeUploadExternal",
        where=lambda c: any(f["title"].endswith("(CSV)") for f in c.json_param("files")),
    )
    uploaded = {f.filename: f.content for f in bot.api.uploaded_files()}
    text = (uploaded["hami-summary.csv"] or b"").decode("utf-8")
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert '\'=HYPERLINK("http://evil","x")' in cells
    assert {"'+team-b", "'@gpu-node-2", "'-2+3", "'\tcmd"} <= set(cells)
    assert not any(cell.startswith(FORMULA) for cell in cells)
