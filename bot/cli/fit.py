"""``hami-summary fit SHAPE [FILE|-]``: where would a job of this shape be placed now?"""

from __future__ import annotations

import argparse
import sys

from bot.cli.input_limit import add_max_input_option
from bot.cli.summarize import UsageProblem, read_input
from bot.config import summary_settings
from core.api import summarize_text
from core.errors import InputError
from core.fit import fit_shape
from core.fit_shape import parse_shape
from core.settings import SettingsError
from core.views.fit_view import fit_json, fit_text

EPILOG = """\
shapes (HAMi's resource names: nvidia.com/gpu, gpucores, gpumem, gpumem-percentage):
  8xH100                 8 whole GPUs whose model contains H100, all on one node
  4                      4 whole GPUs of any model
  2x50c/20GiB            2 GPUs with 50 cores (percent of a GPU) and 20 GiB each
  1xA100 memory=30GiB    1 A100 with 30 GiB (no cores given: 0, HAMi's default)
  2 cores=50 gpumem-percentage=25
A whole GPU (no cores or memory given) needs 100 free cores, all of its memory and no task on
it. Memory not given means all of the GPU's memory (HAMi's default). Models match any part of
the device type, ignoring case (H100, A100-80GB).

examples:
  hami-summary fit 8xH100 metrics.prom
  curl -s http://scheduler:31993/metrics | hami-summary fit 2x50c/20GiB -
  hami-summary fit "1xA100 memory=30GiB" --example --format json
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "fit",
        help="where a job of a given GPU shape would be placed now",
        description="Where would a job of this shape be placed now? Lists the nodes it fits "
        "on (best first: fewest GPUs left fragmented), how many such jobs could start at once, "
        "or why it does not fit and what comes closest.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shape", metavar="SHAPE", help="job shape, e.g. 8xH100 or 2x50c/20GiB")
    parser.add_argument(
        "file", nargs="?", default=None, metavar="FILE|-", help="metrics file, or - for stdin"
    )
    parser.add_argument(
        "--example", action="store_true", help="use the bundled example cluster instead of FILE"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--split-count",
        type=int,
        default=None,
        metavar="N",
        help="HAMi's deviceSplitCount (most tasks per GPU; not in the metrics, so not applied "
        "unless given; HAMi's default is 10)",
    )
    parser.add_argument("--top", type=int, default=20, help="text: nodes listed (default 20)")
    parser.add_argument(
        "--settings", metavar="YAML", default=None, help="settings file (or $HAMI_SUMMARY_SETTINGS)"
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        shape = parse_shape(args.shape)
        if args.split_count is not None and args.split_count < 1:
            raise UsageProblem(f"--split-count must be 1 or more (got {args.split_count}).")
        if args.top < 1:
            raise UsageProblem(f"--top must be 1 or more (got {args.top}).")
        if args.file is None and not args.example and sys.stdin.isatty():
            raise UsageProblem(
                "no input: give a metrics file (hami-summary fit 8xH100 metrics.prom), pipe the "
                "text in with '-', or try --example."
            )
        settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
        text, source = read_input(args.file, args.example, settings.limits.max_input_bytes)
        summary = summarize_text(text, source, settings=settings)
    except (InputError, UsageProblem, SettingsError) as problem:
        message = problem.message if isinstance(problem, InputError) else str(problem)
        print(f"hami-summary fit: {message}", file=sys.stderr)
        return 2
    result = fit_shape(summary.gpus, shape, split_count=args.split_count)
    if args.format == "json":
        sys.stdout.write(fit_json(result))
    else:
        sys.stdout.write(fit_text(result, top=args.top))
    return 0
