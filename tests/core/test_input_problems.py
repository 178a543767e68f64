"""Unusable input is refused with a message that says what it is and what to paste instead."""

from __future__ import annotations

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo
from core.settings import Limits, Settings
from core.views import render
from tests.conftest import read_fixture

SOURCE = SourceInfo(kind="paste", label="pasted text")
HOW_TO = "port 'monitor' (default 31993 -> 9395), path /metrics"


def refusal(text: str, **kwargs: object) -> str:
    with pytest.raises(InputError) as error:
        summarize_text(text, SOURCE, **kwargs)  # type: ignore[arg-type]
    return error.value.message


def test_chat_text_is_not_metrics() -> None:
    message = refusal("hey, are the A100s on gpu-node-1 free?\nthanks!\n")
    assert message.startswith("No metrics found in that text")
    assert HOW_TO in message


def test_dcgm_exporter_metrics_are_named() -> None:
    text = (
        "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"
        "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",modelName="NVIDIA A100"} 1024\n'
    )
    message = refusal(text)
    assert message.startswith("No HAMi scheduler or vGPU monitor metrics in that text.")
    assert "DCGM" in message
    assert "monitor" in message


def test_hami_webui_families_are_not_taken_for_hami() -> None:
    text = (
        'hami_vgpu_count{node="n1",provider="NVIDIA",device_uuid="GPU-1"} 10\n'
        'hami_core_size{node="n1",provider="NVIDIA",device_uuid="GPU-1"} 100\n'
    )
    assert "HAMi-WebUI" in refusal(text)


def test_build_info_alone_is_not_enough() -> None:
    text = read_fixture("scheduler-small.prom").split("\n# HELP hami_gpu_core_allocated")[0]
    message = refusal(text + "\n")
    assert message.startswith("Only hami_build_info was found")


def test_input_over_the_size_limit_is_refused_before_parsing() -> None:
    small_limit = Settings(limits=Limits(max_input_bytes=1024))
    message = refusal(read_fixture("scheduler-small.prom"), settings=small_limit)
    assert message.startswith(
        "The metrics text is 12.0 KiB, over the limit. The input limit is 1.0 KiB; a 10,000-node"
    )


def test_a_messy_slack_paste_gives_the_same_numbers_and_says_what_was_cleaned() -> None:
    clean = read_fixture("scheduler-small.prom")
    messy = (
        "here you go\n```\n$ curl -s http://10.0.0.1:31993/metrics\n"
        + clean.replace('pod="notebook-0"', "pod=\u201cnotebook-0\u201d").replace(">", "&gt;")
        + "```\n"
    )
    summary = summarize_text(messy, SOURCE)
    reference = summarize_text(clean, SOURCE)
    assert summary.cluster == reference.cluster
    assert summary.gpus == reference.gpus
    assert summary.input.cleaning_notes  # what was removed is said
    notes = " ".join(summary.input.cleaning_notes)
    assert "code-fence" in notes and "quote" in notes


def test_a_truncated_last_line_is_dropped_and_noted() -> None:
    clean = read_fixture("scheduler-small.prom")
    cut = clean[: clean.rfind('pod="notebook-0"') + 8]
    summary = summarize_text(cut, SOURCE)
    assert summary.cluster.gpus == 6
    assert any("truncated" in note or "cut off" in note for note in summary.notes)


# One stray quote in a node name makes every line of that node unreadable: the first at line 6.
BROKEN_NODE = read_fixture("scheduler-small.prom").replace("gpu-node-1", '<b>gpu-node-1</b>&"x')
UNREADABLE = (
    "Input problems: 27 line(s) could not be read as metrics and are in no figure (first at "
    "line 6: a label value has no closing double quote, so the label set never ends). Send the "
    "/metrics output as the exporter wrote it, without edits."
)


def test_lines_that_cannot_be_read_are_said_above_the_figures_they_are_missing_from() -> None:
    summary = summarize_text(BROKEN_NODE, SOURCE)
    assert (summary.cluster.nodes, summary.cluster.gpus) == (1, 3)  # gpu-node-1 is gone
    assert summary.input.set_aside == (UNREADABLE,)
    assert UNREADABLE in summary.headline
    assert summary.notes.count(UNREADABLE) == 1
    report = render(summary, "text")
    assert report.index("line(s) could not be read as metrics") < report.index("3 GPUs on 1 node")
    markdown = render(summary, "markdown")
    assert markdown.index("could not be read as metrics") < markdown.index("**3 GPUs** on 1 node")


def test_readable_input_sets_nothing_aside() -> None:
    summary = summarize_text(read_fixture("scheduler-small.prom"), SOURCE)
    assert summary.input.set_aside == ()
    assert not any("could not be read" in note for note in summary.notes)


FETCH_ADVICE = (
    "Fix what it says (the Service's name and namespace, access to the cluster, the "
    "kubeconfig's credentials) and fetch them again."
)


@pytest.mark.parametrize(
    "failed",
    [
        "Error from server (ServiceUnavailable): the server is currently unable to handle the "
        "request (get services hami-scheduler:monitor)",
        'Error from server (NotFound): services "hami-scheduler" not found',
        "error: You must be logged in to the server (Unauthorized)",
        "The connection to the server localhost:8080 was refused - did you specify the right "
        "host or port?",
        "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout",
        "curl: (7) Failed to connect to 10.0.0.1 port 31993 after 0 ms: Couldn't connect to server",
    ],
)
def test_a_failed_fetch_is_quoted_with_what_to_do(failed: str) -> None:
    message = refusal(f"$ kubectl get --raw /api/v1/.../proxy/metrics\n{failed}\n")
    assert message.startswith(
        "That is the error of the command that fetched the metrics, not metrics: "
        f"`{failed[:119] + '…' if len(failed) > 120 else failed}`. {FETCH_ADVICE}"
    )
    assert HOW_TO in message


def test_client_go_log_lines_before_an_error_are_quoted_first() -> None:
    text = (
        "E1203 15:00:00.123456   12345 memcache.go:265] couldn't get current server API group "
        'list: Get "https://10.0.0.1:6443/api?timeout=32s": dial tcp 10.0.0.1:6443: i/o timeout\n'
        "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout\n"
    )
    assert refusal(text).startswith(
        "That is the error of the command that fetched the metrics, not metrics: `E1203 "
        "15:00:00.123456   12345 memcache.go:265] couldn't get current server API group list:"
    )


def test_a_quoted_error_shows_control_characters_as_escapes() -> None:
    message = refusal("Error from server (NotFound): services \x1b[2J\x1b]0;x\x07 not found\n")
    assert "\x1b" not in message and "\x07" not in message
    assert "`Error from server (NotFound): services \\x1b[2J\\x1b]0;x\\x07 not found`" in message


def test_words_about_an_error_are_not_taken_for_one() -> None:
    message = refusal("the scheduler says: error: no metrics today\n")
    assert message.startswith("No metrics found in that text")
