"""Check that ``hami-summary summarize`` writes byte-for-byte what a reference revision writes.

Run from the repository root:

    .venv/bin/python tests/benchmarks/compare_outputs.py [--reference main] [--nodes 1000]

The reference revision is exported with ``git archive`` into a temporary folder and run from
there with this checkout's interpreter, so both sides see the same installed packages. Inputs:
every ``.prom`` file of ``tests/fixtures``, a few inputs that leave the bulk reader (a paste
with a prompt and a fence, a text with an escape and a timestamp, a repeated series, a legacy
and current mix) and the simulator's ``--nodes`` x 8 GPUs scheduler exposition. Each input runs
in every ``--format`` (and ``--pretty`` for the JSON formats, each ``--csv-table``, a namespace
and a node filter); stdout, stderr and the exit code must be identical. The file's modification
time is part of the report: each input is copied once, dated years back (a report says
"saved ... (N days ago)"), and read by both sides.

Exits 1 and prints the first differing lines of each difference.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAVED_AT = 1_600_000_000  # 2020-09-13
FORMATS = ("text", "markdown", "json", "csv", "blocks")
CSV_TABLES = ("gpus", "workloads", "nodes", "namespaces", "models", "runtime")

# Inputs the general parser reads (not plainly the Go client's output).
PASTE = """\
$ kubectl get --raw /metrics
```
# HELP hami_vgpu_device_core_limit Device core limit
# TYPE hami_vgpu_device_core_limit gauge
hami_vgpu_device_core_limit{device_index="0",device_type="A100",device_uuid="GPU-a",node="n1"} 100
# HELP hami_vgpu_device_core_allocated Device cores allocated
# TYPE hami_vgpu_device_core_allocated gauge
hami_vgpu_device_core_allocated{device_index="0",device_type="A1",device_uuid="GPU-a",node="n1"} 30
hami_vgpu_device_core_allocated{device_index="0",device_type="A1",device_uuid="GPU-a",node="n1"} 30
```
"""
ESCAPED = (
    "# HELP hami_vgpu_device_memory_limit_bytes x\n"
    "# TYPE hami_vgpu_device_memory_limit_bytes gauge\n"
    'hami_vgpu_device_memory_limit_bytes{device_index="0",device_type="A\\"1",'
    'device_uuid="GPU-a",node="n1"} 4.294967296e+10 1700000000000\n'
    'hami_vgpu_device_core_limit{device_index="0",device_uuid="GPU-a",node="n1"} 1e-05\n'
)


def run(
    python: str, cwd: Path, argv: list[str], stdin: bytes | None = None
) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "MPLBACKEND": "Agg"}
    env.pop("HAMI_SUMMARY_SETTINGS", None)
    done = subprocess.run(
        [python, "-m", "bot.cli.main", *argv],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def export(revision: str, folder: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)


def inputs(folder: Path, nodes: int) -> list[Path]:
    paths = []
    for fixture in sorted((ROOT / "tests" / "fixtures").glob("*.prom")):
        copy = folder / fixture.name
        copy.write_bytes(fixture.read_bytes())
        paths.append(copy)
    for name, text in (("paste.prom", PASTE), ("escaped.prom", ESCAPED)):
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(folder / name)
    mixed = folder / "mixed.prom"
    mixed.write_bytes(
        (ROOT / "tests/fixtures/scheduler-small.prom").read_bytes()
        + (ROOT / "tests/fixtures/scheduler-small-legacy.prom").read_bytes()
    )
    paths.append(mixed)
    big = folder / f"scheduler-{nodes}.prom"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "simulate",
            f"--nodes={nodes}",
            "--gpus-per-node=8",
            "--seed=0",
            "--output",
            str(big),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    paths.append(big)
    for path in paths:  # reports say how long ago a file was saved: far enough to be stable
        os.utime(path, (SAVED_AT, SAVED_AT))
    return paths


def variants(path: Path) -> list[list[str]]:
    out = []
    for fmt in FORMATS:
        out.append(["summarize", str(path), "--format", fmt])
        if fmt in ("json", "blocks"):
            out.append(["summarize", str(path), "--format", fmt, "--pretty"])
    out += [["summarize", str(path), "--format", "csv", "--csv-table", t] for t in CSV_TABLES]
    # Filters by the first namespace and node the input names, and by ones it does not.
    text = path.read_text(encoding="utf-8", errors="replace")
    namespace = re.search(r'namespace="([^"]+)"', text)
    node = re.search(r'node(?:id|name)?="([^"]+)"', text)
    for fmt in ("text", "json"):
        for option, found in (("--namespace", namespace), ("--node", node)):
            value = found.group(1) if found else "absent"
            out.append(["summarize", str(path), "--format", fmt, option, value])
        out.append(["summarize", str(path), "--format", fmt, "--namespace", "no-such-namespace"])
    return out


def show(label: str, ours: bytes, theirs: bytes) -> None:
    diff = difflib.unified_diff(
        theirs.decode(errors="replace").splitlines()[:2000],
        ours.decode(errors="replace").splitlines()[:2000],
        "reference",
        "this checkout",
        lineterm="",
        n=1,
    )
    print(f"  {label} differs:")
    for line in list(diff)[:12]:
        print("    " + line[:200])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default="main")
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory(prefix="hami-compare-") as temp:
        reference = Path(temp) / "reference"
        reference.mkdir()
        export(args.reference, reference)
        data = Path(temp) / "inputs"
        data.mkdir()
        for path in inputs(data, args.nodes):
            for argv in [*variants(path), ["summarize", "-", "--format", "json"]]:
                stdin = path.read_bytes() if "-" in argv else None
                ours = run(sys.executable, ROOT, argv, stdin)
                theirs = run(sys.executable, reference, argv, stdin)
                if ours != theirs:
                    # A report gives the file's age to a tenth of an hour, which changes every
                    # six minutes: the pair may have straddled a change. Another pair will not.
                    ours = run(sys.executable, ROOT, argv, stdin)
                    theirs = run(sys.executable, reference, argv, stdin)
                checked += 1
                if ours == theirs:
                    continue
                failures += 1
                print(f"DIFFERENT: {' '.join(argv)}")
                if ours[0] != theirs[0]:
                    print(f"  exit code {ours[0]} (reference {theirs[0]})")
                for label, a, b in (("stdout", ours[1], theirs[1]), ("stderr", ours[2], theirs[2])):
                    if a != b:
                        show(label, a, b)
    print(f"{checked} runs compared against {args.reference}: {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
