"""``digests`` in ``hami-summary chat``: the same answer as ``/hami-summary digests`` in Slack,
from a real process reading a real registry; listing collects nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.chat.test_chat import chat
from tests.support.redis_server import free_port


def _registry(tmp_path: Path, cluster_yaml: str) -> dict[str, str]:
    path = tmp_path / "clusters.yaml"
    # Nothing listens at the metrics URL: a listing that tried to collect would say so.
    path.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: http://127.0.0.1:{free_port()}/metrics\n" + cluster_yaml
    )
    return {"HAMI_CLUSTERS_FILE": str(path)}


@pytest.mark.slow
def test_digests_are_listed_with_their_schedule_and_next_post(tmp_path: Path) -> None:
    env = _registry(
        tmp_path,
        "    digests:\n"
        "      - channel: C0GPUOPS1\n"
        '        at: "08:30"\n'
        "        time_zone: Europe/Berlin\n"
        "        weekdays: mon-fri\n",
    )
    result = chat(stdin="/hami-summary digests\ndigests\n", tmp_path=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # Both spellings answer, the same way.
    assert lines.count("Digests of the clusters you may query here") == 2
    listed = [line for line in lines if line.startswith("• demo to C0GPUOPS1: ")]
    assert len(listed) == 2 and listed[0] == listed[1]
    assert re.fullmatch(
        r"• demo to C0GPUOPS1: 08:30 Europe/Berlin, mon-fri\. "
        r"Next: \w{3} \d{4}-\d\d-\d\d 08:30 \(in [^)]+\)\.",
        listed[0],
    ), listed[0]
    assert "Cannot reach" not in result.stdout  # nothing was collected
    assert "last posted" not in result.stdout  # the chat posts none


@pytest.mark.slow
def test_no_digest_declared_is_said_with_where_to_declare_one(tmp_path: Path) -> None:
    result = chat(stdin="digests\n", tmp_path=tmp_path, env=_registry(tmp_path, ""))
    assert result.returncode == 0, result.stderr
    assert "No digests for you here" in result.stdout
    assert "None of the clusters you may query here has a digest." in result.stdout
