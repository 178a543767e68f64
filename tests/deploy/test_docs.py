"""The documents say what is true: every documented Helm command renders, the chart README is
the one its generator writes, both Slack manifests describe the same app, every setting the bot
reads from the environment is documented, the replies shown are what the commands print today,
and every page of the site is in its navigation."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import helm_python as helm
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "hami-summary"
PAGES = sorted((REPO / "docs").glob("*.md"))
DOCUMENTS = [REPO / "README.md", *PAGES, CHART / "README.md"]


def site_text() -> str:
    """The README and every page of the documentation site, one after the other."""
    return "\n".join(path.read_text(encoding="utf-8") for path in [REPO / "README.md", *PAGES])


def chart_readme_tool() -> ModuleType:
    path = REPO / "deploy" / "helm" / "chart_readme.py"
    spec = importlib.util.spec_from_file_location("chart_readme", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules.
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def helm_commands(document: Path) -> list[str]:
    """Every `helm install`/`helm template`/`helm upgrade` command, continuation lines joined."""
    commands: list[str] = []
    lines = iter(document.read_text().splitlines())
    for line in lines:
        text = line.strip()
        if not re.match(r"^helm (install|template|upgrade)\b", text):
            continue
        while text.endswith("\\"):
            text = text[:-1] + " " + next(lines).strip()
        commands.append(text)
    return commands


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def values_of(command: str) -> tuple[str, str, dict[str, Any]]:
    """(release, namespace, values) of a documented helm command, as Helm would read them:
    values files first, then the --set family."""
    words = shlex.split(command)[2:]
    positional: list[str] = []
    namespace = "default"
    files: list[dict[str, Any]] = []
    sets: list[dict[str, Any]] = []
    parsers = {
        "--set": helm.parse_set_string,
        "--set-string": helm.parse_set_string_values,
        "--set-json": helm.parse_set_json,
    }
    flags = {"--create-namespace", "--wait", "--atomic", "--dry-run"}
    words_iter: Iterator[str] = iter(words)
    for word in words_iter:
        if word in ("-n", "--namespace"):
            namespace = next(words_iter)
        elif word in ("-f", "--values"):
            path = REPO / next(words_iter)
            assert path.exists(), f"{command}: {path} does not exist"
            files.append(helm.values_from_yaml(path.read_text()))
        elif word in parsers:
            sets.append(parsers[word](next(words_iter)))
        elif word == "--set-file":
            key, _, file_name = next(words_iter).partition("=")
            assert (REPO / file_name).exists(), f"{command}: {file_name} does not exist"
            text = (REPO / file_name).read_text()
            sets.append(helm.parse_set_literal(f"{key}={text}"))
        elif word in flags:
            continue
        else:
            assert not word.startswith("-"), f"{command}: option {word} is not understood here"
            positional.append(word)
    release, chart_path = positional
    assert (REPO / chart_path).resolve() == CHART, command
    values: dict[str, Any] = {}
    for layer in files + sets:
        values = deep_merge(values, layer)
    return release, namespace, values


ALL_COMMANDS = [(doc.relative_to(REPO), cmd) for doc in DOCUMENTS for cmd in helm_commands(doc)]


def test_the_documents_show_helm_commands() -> None:
    documents = {str(doc) for doc, _ in ALL_COMMANDS}
    assert documents == {"docs/operating.md", "deploy/helm/hami-summary/README.md"}
    assert len(ALL_COMMANDS) >= 5


def test_every_page_is_in_the_navigation() -> None:
    """A page left out of ``nav`` builds but no reader finds it; mkdocs only says so in INFO."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = {next(iter(entry.values())) for entry in config["nav"]}
    assert in_nav == {page.name for page in PAGES}
    assert {"index.md", "architecture.md", "development.md"} <= in_nav


def test_the_readme_links_every_page_and_stays_short() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([a-z-]+\.md)\)", readme))
    assert linked == {page.name for page in PAGES}
    assert len(readme.splitlines()) <= 250


def test_the_readme_sample_is_what_summarize_prints() -> None:
    """The README's sample text reply is the start of ``hami-summary summarize --example``."""
    from importlib import resources

    from core.api import summarize_text
    from core.model import SourceInfo
    from core.views import text_view

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = "$ hami-summary summarize --example\n"
    shown = readme[readme.index(command) + len(command) :]
    shown = shown[: shown.index("```")]
    example = resources.files("core").joinpath("data/example-scheduler.prom").read_text("utf-8")
    summary = summarize_text(example, SourceInfo(kind="file", label="bundled example cluster"))
    printed = text_view.render(summary)
    assert len(shown.splitlines()) >= 10
    assert printed.startswith(shown)


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


@pytest.mark.parametrize(
    ("document", "command"), ALL_COMMANDS, ids=[f"{d}:{i}" for i, (d, _) in enumerate(ALL_COMMANDS)]
)
def test_every_documented_helm_command_renders(
    chart: helm.Chart, document: Path, command: str
) -> None:
    release, namespace, values = values_of(command)
    manifests = chart.render(values, name=release, namespace=namespace)
    objects = [
        doc
        for path, text in manifests.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]
    assert "Deployment" in {o["kind"] for o in objects}
    report = helm.lint(CHART, values, strict=True, namespace=namespace)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_set_file_for_the_registry_is_refused_with_the_reason(chart: helm.Chart) -> None:
    example = REPO / "deploy" / "helm" / "examples" / "registry-values.yaml"
    as_string = helm.parse_set_literal(f"registry={example.read_text()}")
    with pytest.raises(helm.HelmValuesError) as caught:
        chart.render(as_string, name="hs", namespace="bots")
    assert "at '/registry': got string, want object" in str(caught.value)
    assert not [cmd for _, cmd in ALL_COMMANDS if "--set-file registry" in cmd]


def test_the_chart_readme_is_generated_from_values_yaml() -> None:
    tool = chart_readme_tool()
    committed = (CHART / "README.md").read_text()
    assert committed == tool.render(), "run python deploy/helm/chart_readme.py"
    rows = tool.parameters((CHART / "values.yaml").read_text())
    undocumented = [row.key for row in rows if not row.description]
    assert undocumented == []
    keys = {row.key for row in rows}
    assert {
        "rbac.hamiNamespaces",
        "nvidiaSmi.namespaces",
        "pendingPods.namespaces",
        "networkPolicy.apiServers.cidrs",
        "terminationGracePeriodSeconds",
        "registry",
    } <= keys
    # A value inside a list is not mistaken for a key of its own.
    assert not [key for key in keys if key.startswith("podSecurityContext.seccompProfile.x")]


def test_the_generator_reads_helm_docs_comments() -> None:
    tool = chart_readme_tool()
    text = (
        "# -- Top.\n# Continued.\ntop: 1\n"
        "nested:\n  # -- A list.\n  items:\n    - name: not-a-key\n  plain: x\n"
    )
    rows = {row.key: row for row in tool.parameters(text)}
    assert rows["top"].description == "Top. Continued." and rows["top"].kind == "int"
    assert rows["nested.items"].default == '[{"name": "not-a-key"}]'
    assert rows["nested.plain"].description == ""
    assert "nested.items.name" not in rows and "nested" not in rows


MANIFESTS = REPO / "deploy"


def _without_transport(manifest: dict[str, Any]) -> dict[str, Any]:
    copy = yaml.safe_load(yaml.safe_dump(manifest))
    for command in copy["features"]["slash_commands"]:
        command.pop("url", None)
    copy["settings"]["event_subscriptions"].pop("request_url", None)
    copy["settings"]["interactivity"].pop("request_url", None)
    copy["settings"].pop("socket_mode_enabled")
    return dict(copy)


def test_the_socket_mode_manifest_differs_only_where_it_must() -> None:
    http = yaml.safe_load((MANIFESTS / "slack-app-manifest.yaml").read_text())
    socket = yaml.safe_load((MANIFESTS / "slack-app-manifest-socket-mode.yaml").read_text())
    assert _without_transport(http) == _without_transport(socket)
    assert http["settings"]["socket_mode_enabled"] is False
    assert socket["settings"]["socket_mode_enabled"] is True
    urls = {c["url"] for c in http["features"]["slash_commands"]}
    urls |= {
        http["settings"]["event_subscriptions"]["request_url"],
        http["settings"]["interactivity"]["request_url"],
    }
    assert len(urls) == 1 and next(iter(urls)).endswith("/slack/events")
    assert "request_url" not in yaml.safe_dump(socket) and "url:" not in yaml.safe_dump(socket)


def test_every_setting_read_from_the_environment_is_documented() -> None:
    sources = [REPO / "bot" / "config.py"]
    config = "".join(path.read_text() for path in sources)
    names = set(re.findall(r'"((?:HAMI_SUMMARY|SLACK|REDIS|HAMI)_[A-Z_]+)"', config))
    assert {"HAMI_SUMMARY_THREAD_MAX_BYTES", "HAMI_SUMMARY_WORKER_THREADS"} <= names
    assert "HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS" in names
    documents = site_text()
    assert sorted(name for name in names if f"`{name}`" not in documents) == []


@pytest.mark.slow
def test_the_docs_show_the_first_reply_its_command_prints() -> None:
    """The first reply docs/slack.md shows for a simulated 1,000-node cluster is what
    `hami-summary chat sim1000.prom` prints for it today (up to the line where it saves the
    chart)."""
    from bot.cli.chat import CHAT_HINTS
    from core.api import summarize_text
    from core.model import SourceInfo
    from core.simulate import simulate_exposition
    from core.views import text_view

    page = (REPO / "docs" / "slack.md").read_text(encoding="utf-8")
    command = "$ hami-summary chat sim1000.prom < /dev/null\n"
    shown = page[page.index(command) + len(command) :]
    shown = shown[: shown.index("```")]
    # The chat reads the file as an attached file named by its file name.
    summary = summarize_text(
        simulate_exposition(1000, 8, seed=0), SourceInfo("file", "sim1000.prom")
    )
    assert shown == text_view.first_page(summary, CHAT_HINTS)


def test_the_metrics_page_names_every_family_read() -> None:
    """docs/metrics.md lists every family of the family table, current and legacy names."""
    from core.families import FAMILIES

    page = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([A-Za-z_:][A-Za-z0-9_:]*)`", page))
    assert set(FAMILIES) - named == set()
