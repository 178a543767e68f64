"""``core`` is pure: it never imports ``bot`` nor any library that does network or Slack I/O."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = (
    "bot",
    "socket",
    "http",
    "urllib",
    "requests",
    "redis",
    "slack_sdk",
    "slack_bolt",
    "kubernetes",
    "websocket",
    "websockets",
    "subprocess",
)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_core_imports_nothing_with_io() -> None:
    offenders = {
        str(path.relative_to(CORE.parent)): sorted(_imports(path) & set(FORBIDDEN))
        for path in CORE.rglob("*.py")
    }
    offenders = {name: bad for name, bad in offenders.items() if bad}
    assert offenders == {}


def test_the_check_sees_core_modules() -> None:
    # Guard against a vacuous pass: the walk must find the engine's modules.
    names = {p.name for p in CORE.rglob("*.py")}
    assert {"api.py", "model.py", "readings.py", "build.py"} <= names


# -- bot/: dependencies run one way ------------------------------------------------------------
#
# Slack, the CLI and the web server -> the conversation -> the sources (clusters, pastes) and
# the store -> core. Each rule names what a package must never import, at module level or
# inside a function: a back arrow would make the lower layer know the upper one.

BOT = CORE.parent / "bot"
LAYER_RULES: dict[str, frozenset[str]] = {
    "store": frozenset(
        {"bot.clusters", "bot.conversation", "bot.slack", "bot.live", "bot.web", "bot.cli"}
    ),
    "clusters": frozenset({"bot.conversation", "bot.slack", "bot.live", "bot.web", "bot.cli"}),
    "conversation": frozenset(
        {"bot.slack", "bot.live", "bot.web", "bot.cli", "slack_bolt", "slack_sdk"}
    ),
    "ops": frozenset(
        {
            "bot.store",
            "bot.clusters",
            "bot.conversation",
            "bot.slack",
            "bot.live",
            "bot.web",
            "bot.cli",
        }
    ),
    "config": frozenset(
        {"bot.store", "bot.clusters", "bot.conversation", "bot.slack", "bot.live", "bot.web"}
    ),
}


def _modules(root: Path) -> dict[str, Path]:
    """Every module under ``root`` (a package directory) by dotted name."""
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imported_names(path: Path) -> set[str]:
    """Dotted names ``path`` imports, anywhere in the file (``from a import b`` gives ``a`` and
    ``a.b``, since ``b`` may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _matches(name: str, forbidden: str) -> bool:
    return name == forbidden or name.startswith(forbidden + ".")


def back_arrows(root: Path, rules: dict[str, frozenset[str]]) -> list[str]:
    """``"file imports name"`` for every import a rule forbids."""
    found = []
    for name, path in sorted(_modules(root).items()):
        parts = name.split(".")
        if len(parts) < 2 or parts[1] not in rules:
            continue
        for imported in sorted(_imported_names(path)):
            if any(_matches(imported, bad) for bad in rules[parts[1]]):
                found.append(f"{path.relative_to(root.parent)} imports {imported}")
    return found


def module_graph(root: Path) -> dict[str, set[str]]:
    """Which of ``root``'s modules each of them imports (the nearest module of each name)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for imported in _imported_names(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and imported != root.name:
                graph[name].add(imported)
    return graph


def package_graph(module_edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same edges between the packages and top-level modules of the root (``bot.store``,
    ``bot.live``, ...), without edges inside one of them."""

    def unit(name: str) -> str:
        return ".".join(name.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for source, targets in module_edges.items():
        edges = graph.setdefault(unit(source), set())
        edges.update(unit(t) for t in targets if unit(t) != unit(source))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan's algorithm,
    iterative so deep graphs do not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_bot_packages_import_only_downwards() -> None:
    assert back_arrows(BOT, LAYER_RULES) == []


def test_bot_has_no_import_cycle() -> None:
    modules = module_graph(BOT)
    assert cycles(package_graph(modules)) == []
    assert cycles(modules) == []


def test_the_bot_checks_see_the_real_arrows() -> None:
    # Guard against a vacuous pass: the graph must hold the arrows the bot is built on.
    packages = package_graph(module_graph(BOT))
    assert {"bot.conversation", "bot.live"} <= packages["bot.slack"]
    assert {"bot.clusters", "bot.store"} <= packages["bot.conversation"]
    assert "bot.store" in packages["bot.clusters"]  # the scrape cache adapts collections


def test_a_back_arrow_and_a_cycle_are_caught(tmp_path: Path) -> None:
    package = tmp_path / "bot"
    for folder in ("store", "clusters"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "clusters" / "collect.py").write_text("from bot.store.kv import Store\n")
    (package / "store" / "kv.py").write_text(
        "class Store:\n    def decode(self):\n        from bot.clusters.collect import X\n"
    )
    assert back_arrows(package, LAYER_RULES) == [
        "bot/store/kv.py imports bot.clusters.collect",
        "bot/store/kv.py imports bot.clusters.collect.X",
    ]
    graph = module_graph(package)
    assert cycles(graph) == [["bot.clusters.collect", "bot.store.kv"]]
    assert cycles(package_graph(graph)) == [["bot.clusters", "bot.store"]]


def test_the_conversation_knows_no_slack() -> None:
    # Slack and the terminal translate; the conversation decides and never writes Slack.
    assert {"bot.slack", "slack_bolt", "slack_sdk"} <= LAYER_RULES["conversation"]
    assert back_arrows(BOT, {"conversation": LAYER_RULES["conversation"]}) == []
    assert "bot.conversation" in package_graph(module_graph(BOT))  # the walk sees it


def test_a_conversation_that_imports_slack_is_caught(tmp_path: Path) -> None:
    package = tmp_path / "bot"
    (package / "conversation").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "conversation" / "__init__.py").write_text("")
    (package / "conversation" / "replies.py").write_text(
        "import slack_sdk\n"
        "from slack_bolt import App\n"
        "def render():\n    from bot.slack.markup import mention_user\n"
    )
    assert back_arrows(package, LAYER_RULES) == [
        "bot/conversation/replies.py imports bot.slack.markup",
        "bot/conversation/replies.py imports bot.slack.markup.mention_user",
        "bot/conversation/replies.py imports slack_bolt",
        "bot/conversation/replies.py imports slack_bolt.App",
        "bot/conversation/replies.py imports slack_sdk",
    ]
