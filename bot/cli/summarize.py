"""``hami-summary summarize [FILE|-]``: the summary of pasted or exported metrics text."""

from __future__ import annotations

import argparse
import os
import sys
import zlib
from datetime import UTC, datetime

from bot.cli.collector import collector_paused
from bot.cli.input_limit import add_max_input_option
from bot.config import summary_settings
from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo, Summary
from core.settings import SettingsError
from core.summary.input_notes import input_problems_note, over_input_limit
from core.text_decoding import decode_metrics_bytes
from core.views import CSV_TABLES, render

FORMATS = ("text", "markdown", "json", "csv", "blocks")


class UsageProblem(Exception):
    """Something the user can fix (exit code 2); the message says what and how."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "summarize",
        help="summarise HAMi /metrics text from a file or stdin",
        description="Summarise HAMi /metrics text (scheduler and/or vGPU monitor) from a file, "
        "or from stdin with '-'.",
    )
    parser.add_argument(
        "file", nargs="?", default=None, metavar="FILE|-", help="metrics file, or - for stdin"
    )
    parser.add_argument(
        "--example",
        action="store_true",
        help="summarise the bundled example cluster instead of FILE",
    )
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--pretty",
        action="store_true",
        help="with --format json or blocks: indent the JSON (default: one compact line)",
    )
    parser.add_argument(
        "--csv-table",
        choices=CSV_TABLES,
        default=None,
        help="with --format csv: print only this table",
    )
    parser.add_argument(
        "--chart",
        metavar="PNG",
        default=None,
        help="also write the allocation chart to this PNG file",
    )
    parser.add_argument("--namespace", default=None, help="show only this namespace")
    parser.add_argument("--node", default=None, help="show only this node")
    parser.add_argument(
        "--settings",
        metavar="YAML",
        default=None,
        help="thresholds and limits to use instead of the defaults (or $HAMI_SUMMARY_SETTINGS)",
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def read_input(file: str | None, use_example: bool, max_bytes: int) -> tuple[str, SourceInfo]:
    if use_example:
        from importlib import resources

        text = resources.files("core").joinpath("data/example-scheduler.prom").read_text("utf-8")
        return text, SourceInfo(kind="file", label="bundled example cluster")
    if file is None:
        if sys.stdin.isatty():
            raise UsageProblem(
                "no input: give a metrics file (hami-summary summarize metrics.prom), pipe the "
                "text in with '-', or try --example."
            )
        file = "-"
    if file == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
        source = SourceInfo(kind="paste", label="standard input")
    else:
        # os rather than pathlib: this runs on every summary, and pathlib's import is not free.
        try:
            with open(file, "rb") as handle:
                data = handle.read(max_bytes + 1)
                modified = datetime.fromtimestamp(os.fstat(handle.fileno()).st_mtime, UTC)
        except OSError as err:
            raise UsageProblem(f"cannot read {file}: {err.strerror or err}.") from err
        name = os.path.basename(os.path.normpath(file))
        source = SourceInfo(kind="file", label=f"file {name}", fetched_at=modified)
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(data, max_bytes)
    if len(data) > max_bytes:
        raise UsageProblem(f"the input is over the limit. {over_input_limit(max_bytes)}")
    return decode_metrics_bytes(data), source


GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """Decompress a gzipped export, refusing one that inflates past the size limit."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as err:
        raise UsageProblem(f"the input starts like gzip but does not decompress ({err}).") from err
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise UsageProblem(
            f"the decompressed input is over the limit. {over_input_limit(max_bytes)}"
        )
    return out


def format_summary(
    summary: Summary,
    fmt: str,
    csv_table: str | None,
    top: int | None = None,
    *,
    pretty: bool = False,
) -> str:
    """``summary`` in ``fmt``; JSON formats are compact unless ``pretty``."""
    output = _formatted(summary, fmt, csv_table, top, pretty=pretty)
    return output if isinstance(output, str) else output.decode() + "\n"


def _formatted(
    summary: Summary,
    fmt: str,
    csv_table: str | None,
    top: int | None,
    *,
    pretty: bool,
) -> str | bytes:
    """The output of ``format_summary``; ``--format json`` as UTF-8 bytes without the final
    newline when orjson wrote it (see ``write_output``)."""
    # The JSON view (and orjson) are loaded only for the JSON formats: text needs neither.
    if fmt == "blocks":
        from bot.conversation.replies import SummaryRef, SummaryReply
        from bot.slack.messages import slack_message
        from core.views import json_view

        # The message the bot posts for this summary (as chat.update sends it): the same
        # function builds both, so the preview is what Slack shows.
        posted = slack_message(SummaryReply(summary, SummaryRef(), None))
        return json_view.dumps({"text": posted.text, "blocks": posted.blocks}, pretty=pretty)
    if fmt == "json":
        from core.views import json_view

        json_text = json_view.render_utf8(summary, pretty=pretty)
        return json_text if isinstance(json_text, bytes) else json_text + "\n"
    if fmt == "csv" and csv_table is not None:
        from core.views.csv_view import table_csv

        return table_csv(summary, csv_table)
    return render(summary, fmt, top=top)


def write_output(output: str | bytes) -> None:
    """Text through ``sys.stdout``; UTF-8 bytes (a JSON document, newline still to come) straight
    to its buffer when the stream writes UTF-8 anyway, which spares decoding and re-encoding
    some megabytes. Either way the same bytes arrive."""
    if isinstance(output, str):
        sys.stdout.write(output)
        return
    buffer = getattr(sys.stdout, "buffer", None)
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if buffer is None or encoding not in ("utf8", "utf_8"):
        sys.stdout.write(output.decode() + "\n")
        return
    sys.stdout.flush()  # what was written as text goes first
    buffer.write(output)
    buffer.write(b"\n")


def write_chart(summary: Summary, path: str) -> None:
    """The chart; a filtered one gives each namespace its colour in the cluster's chart."""
    from core.api import cluster_of
    from core.views.chart import render_chart
    from core.views.palette import namespace_ranking

    try:
        png = render_chart(summary, ranking=namespace_ranking(cluster_of(summary)))
        with open(path, "wb") as handle:
            handle.write(png)
    except OSError as err:
        raise UsageProblem(f"cannot write the chart to {path}: {err.strerror or err}.") from err
    print(f"chart written to {os.path.realpath(path)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    with collector_paused():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
        text, source = read_input(args.file, args.example, settings.limits.max_input_bytes)
        summary = summarize_text(
            text, source, namespace=args.namespace, node=args.node, settings=settings
        )
        write_output(
            _formatted(
                summary,
                args.format,
                args.csv_table,
                settings.limits.top_rows,
                pretty=args.pretty,
            )
        )
        if args.chart is not None:
            write_chart(summary, args.chart)
    except (InputError, UsageProblem, SettingsError) as problem:
        message = problem.message if isinstance(problem, InputError) else str(problem)
        print(f"hami-summary summarize{_where(args)}: {message}", file=sys.stderr)
        return 2
    for warning in left_out_warnings(summary):
        print(f"hami-summary summarize{_where(args)}: warning: {warning}", file=sys.stderr)
    return 0


def left_out_warnings(summary: Summary) -> list[str]:
    """The sentences on what was left out of the figures (lines set aside, values no exporter
    writes), for stderr: readers of JSON and CSV may never look at the notes."""
    warnings = [*summary.input.set_aside, input_problems_note(summary.input.problems)]
    return [warning for warning in warnings if warning]


def _where(args: argparse.Namespace) -> str:
    return "" if args.example or args.file in (None, "-") else f" ({args.file})"
