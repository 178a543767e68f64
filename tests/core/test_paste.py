"""Cleaning pasted metrics text: what is removed, what is repaired, what is kept untouched."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.exposition import parse_exposition
from core.paste import clean_paste
from core.simulate import simulate_exposition
from tests.conftest import read_fixture

SMALL = read_fixture("scheduler-small.prom")


def samples_of(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    """Samples as comparable tuples (values as repr, so NaN equals NaN)."""
    exposition = parse_exposition(text)
    assert exposition.rejected == [], exposition.rejected
    return [(s.name, tuple(s.labels.items()), repr(s.value)) for s in exposition.samples]


def test_clean_exposition_comes_back_unchanged_without_notes() -> None:
    for name in ("scheduler-small.prom", "scheduler-small-legacy.prom", "vgpumonitor-small.prom"):
        text = read_fixture(name)
        cleaned = clean_paste(text)
        assert cleaned.text is text
        assert cleaned.notes == ()


def test_clean_text_comes_back_as_the_same_object() -> None:
    # Its cost against parsing is measured in tests/benchmarks/bench_parse_paths.py.
    text = simulate_exposition(100, 8, seed=5)
    assert clean_paste(text).text is text


def test_a_typical_slack_paste_is_cleaned_and_noted() -> None:
    lines = SMALL.rstrip("\n").split("\n")
    paste = "\n".join(
        [
            "Here is what the scheduler says, can someone look?",
            "```",
            "$ curl -s http://10.0.0.12:31993/metrics",
            *lines,
            "```",
            "thanks!",
        ]
    )
    cleaned = clean_paste(paste)
    assert samples_of(cleaned.text) == samples_of(SMALL)
    assert cleaned.notes == (
        "removed 2 code-fence markers (```)",
        "removed 1 shell prompt or command line (first: `$ curl -s http://10.0.0.12:31993/metrics`)",
        "removed 2 lines of other text, not metrics (first: `Here is what the scheduler says, can "
        "someone look?`)",
    )
    # Removed lines become blank lines: line numbers still match the paste.
    assert len(cleaned.text.split("\n")) == len(paste.split("\n"))
    assert cleaned.text.split("\n")[3:-2] == lines


def test_fences_glued_to_the_first_and_last_lines_and_language_words() -> None:
    body = SMALL.rstrip("\n")
    for paste in (f"```{body}```", f"```text\n{body}\n```", f"```prometheus\n{body}```"):
        cleaned = clean_paste(paste)
        assert samples_of(cleaned.text) == samples_of(SMALL), paste[:20]
        assert cleaned.notes == ("removed 2 code-fence markers (```)",)


def test_inline_code_marks_around_one_line() -> None:
    cleaned = clean_paste('`hami_gpu_shared_count{node="n1"} 2`')
    assert cleaned.text == 'hami_gpu_shared_count{node="n1"} 2'
    assert cleaned.notes == ("removed 1 code-fence marker (```)",)


def test_slack_escapes_are_decoded_when_the_text_is_slack_escaped() -> None:
    paste = (
        "# HELP hami_build_info build metadata &lt;see docs&gt;\n"
        'hami_build_info{platform="linux&amp;amd64",version="v2.10.0"} 1\n'
    )
    cleaned = clean_paste(paste)
    assert cleaned.text == (
        "# HELP hami_build_info build metadata <see docs>\n"
        'hami_build_info{platform="linux&amd64",version="v2.10.0"} 1\n'
    )
    assert cleaned.notes == ("decoded Slack's HTML escapes (&amp; &lt; &gt;) on 2 lines",)


def test_entities_stay_when_the_text_also_has_a_bare_ampersand() -> None:
    """Slack never leaves a bare '&': such text was not escaped by Slack, keep it as it is."""
    paste = 'm{a="x & y"} 1\nm{a="&amp;"} 2\n'
    cleaned = clean_paste(paste)
    assert cleaned.text == paste
    assert cleaned.notes == ()


def test_quote_markers_plain_and_escaped() -> None:
    lines = SMALL.rstrip("\n").split("\n")
    for marker in ("> ", ">", "&gt; "):
        cleaned = clean_paste("\n".join(marker + line for line in lines))
        assert samples_of(cleaned.text) == samples_of(SMALL), marker
        assert f"removed {len(lines)} quote markers (>)" in cleaned.notes
    cleaned = clean_paste(">>> " + "\n".join(lines))
    assert samples_of(cleaned.text) == samples_of(SMALL)
    assert cleaned.notes == ("removed 1 quote marker (>)",)


def test_shell_prompts_and_command_lines_are_removed() -> None:
    commands = [
        "$ curl -s http://10.0.0.12:31993/metrics",
        "user@bastion:~$ kubectl get --raw /api/v1/namespaces/kube-system/services/x/proxy/metrics",
        "[root@gpu-node-1 ~]# curl localhost:9395/metrics",
        "curl -s localhost:9395/metrics | grep hami",
        "% wget -qO- http://hami:31993/metrics",
        "PS C:\\Users\\me> kubectl get --raw /metrics",
    ]
    cleaned = clean_paste("\n".join([*commands, SMALL]))
    assert samples_of(cleaned.text) == samples_of(SMALL)
    assert cleaned.notes == (
        "removed 6 shell prompt or command lines (first: `$ curl -s http://10.0.0.12:31993/metrics`)",
    )


def test_typographic_quotes_around_label_values_are_straightened() -> None:
    paste = "hami_gpu_shared_count{node=“gpu-node-1”,device_uuid=‘GPU-1’} 2\n"
    cleaned = clean_paste(paste)
    assert cleaned.text == 'hami_gpu_shared_count{node="gpu-node-1",device_uuid="GPU-1"} 2\n'
    assert cleaned.notes == (
        "replaced typographic quotes (“ ” ‘ ’) with straight quotes on 1 line",
    )


def test_typographic_quotes_inside_a_valid_value_are_kept() -> None:
    paste = 'm{title="the “best” GPU"} 1\n'
    assert clean_paste(paste).text == paste


def test_non_breaking_spaces_between_name_and_value_are_replaced() -> None:
    paste = "hami_gpu_shared_count\u00a02\nother\u202f3\n"
    cleaned = clean_paste(paste)
    assert cleaned.text == "hami_gpu_shared_count 2\nother 3\n"
    assert cleaned.notes == ("replaced non-breaking spaces on 2 lines",)


def test_slack_link_markup_is_unwrapped() -> None:
    paste = (
        "# HELP m see <https://github.com/Project-HAMi/HAMi|the HAMi repo>\n"
        'm{url="<http://10.0.0.12:31993/metrics>"} 1\n'
    )
    cleaned = clean_paste(paste)
    assert cleaned.text == (
        '# HELP m see the HAMi repo\nm{url="http://10.0.0.12:31993/metrics"} 1\n'
    )
    assert cleaned.notes == ("unwrapped 2 Slack links (<url|text>)",)


def test_a_last_line_cut_off_mid_label_is_dropped_and_noted() -> None:
    paste = SMALL + 'hami_gpu_shared_count{device_index="0",device_type="NVIDIA A1'
    cleaned = clean_paste(paste)
    assert cleaned.text == SMALL
    assert cleaned.notes == (
        "dropped the last line, which is cut off mid-label (the text ends without a newline): "
        '`…mi_gpu_shared_count{device_index="0",device_type="NVIDIA A1`',
    )
    assert not parse_exposition(cleaned.text).truncated_last_line


def test_a_last_line_cut_off_mid_value_inside_a_fence_is_dropped() -> None:
    paste = '```\nok 1\nhami_gpu_memory_limit_bytes{node="n"} 4.29e+\n```'
    cleaned = clean_paste(paste)
    assert cleaned.text == "\nok 1\n\n"
    assert cleaned.notes == (
        "removed 2 code-fence markers (```)",
        "dropped the last line, which is cut off mid-value (the text ends without a newline): "
        '`hami_gpu_memory_limit_bytes{node="n"} 4.29e+`',
    )


def test_a_broken_metric_line_in_the_middle_is_left_for_the_parser_to_explain() -> None:
    paste = "ok 1\nhami_gpu_shared_count{node=gpu-node-1} 2\nok 2\n"
    cleaned = clean_paste(paste)
    assert cleaned.text == paste
    assert cleaned.notes == ()
    rejected = parse_exposition(cleaned.text).rejected
    assert [(r.line_no, r.reason) for r in rejected] == [
        (2, "the value of label 'node' is not in double quotes")
    ]


def test_chat_only_text_is_emptied_with_a_note() -> None:
    cleaned = clean_paste("hi team\ncan someone check the GPUs?")
    assert cleaned.text == "\n"
    assert cleaned.notes == ("removed 2 lines of other text, not metrics (first: `hi team`)",)


# --- property: whatever the wrapping, the metrics come through unchanged ----------------------

metric_line = st.builds(
    lambda name, node, value: f'{name}{{node="{node}",zone="vGPU"}} {value}',
    st.sampled_from(["hami_gpu_shared_count", "hami_gpu_core_limit_ratio", "GPUDeviceSharedNum"]),
    st.text("abc-019", min_size=1, max_size=8),
    st.sampled_from(["0", "1", "2.5e+10", "NaN", "+Inf", "0.7666666666666667"]),
)
noise_line = st.sampled_from(
    [
        "Here you go:",
        "$ curl -s localhost:9395/metrics",
        "kubectl get --raw /api/v1/namespaces/kube-system/services/hami-scheduler:monitor/proxy/x",
        "```",
        "```text",
        "thanks :pray:",
        "",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(metric_line, min_size=1, max_size=8),
    st.lists(noise_line, max_size=3),
    st.lists(noise_line, max_size=3),
    st.sampled_from(["", "> ", "&gt; "]),
)
def test_wrapped_metrics_parse_to_the_same_samples(
    body: list[str], before: list[str], after: list[str], quote: str
) -> None:
    original = "\n".join(body) + "\n"
    paste = "\n".join(quote + line for line in [*before, *body, *after])
    cleaned = clean_paste(paste)
    assert samples_of(cleaned.text) == samples_of(original)
    assert len(cleaned.text.split("\n")) == len(paste.split("\n"))


@settings(max_examples=150, deadline=None)
@given(st.lists(metric_line, max_size=8), st.lists(st.sampled_from(["", "\n"]), max_size=1))
def test_valid_lines_are_kept_byte_for_byte(body: list[str], end: list[str]) -> None:
    text = "\n".join(body) + "".join(end)
    cleaned = clean_paste(text)
    assert cleaned.text == text
    assert cleaned.notes == ()
