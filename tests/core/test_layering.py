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


# -- core/: layers, lowest first ---------------------------------------------------------------
#
# Shared values -> the parsers of the exposition text -> the typed readings -> the summary (and
# fit) -> snapshots of it -> the views -> digests and alerts -> the entry points. A module may
# import its own layer and those below it, never one above. Each entry is a module, or a package
# with every module in it; every core module is in exactly one layer, so a new one must be
# placed.

CORE_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "core",
            "core.errors",
            "core.outcomes",
            "core.model",
            "core.settings",
            "core.json_text",
            "core.text_decoding",
            "core.number_style",
            "core.visible_text",
            "core.command_errors",
        ),
    ),
    (
        "parse",
        (
            "core.value_ranges",
            "core.families",
            "core.exposition_lines",
            "core.exposition",
            "core.line_limits",
            "core.recognise",
            "core.paste",
            "core.sample_screen",
        ),
    ),
    (
        "read",
        (
            "core.family_rows",
            "core.readings",
            "core.fast_reader",
            "core.metrics_reader",
            "core.realusage",
        ),
    ),
    (
        "summary",
        (
            "core.summary",
            "core.usage_assessment",
            "core.fit",
            "core.fit_shape",
            "core.fit_slices",
            "core.fit_reason",
            "core.pending",
        ),
    ),
    ("history", ("core.history",)),
    ("views", ("core.views", "core.headline")),
    ("notify", ("core.notify",)),
    ("entry", ("core.api", "core.simulate")),
)


def _core_graph(root: Path) -> dict[str, set[str]]:
    """Which of ``root``'s modules each of them imports, anywhere in the file: for
    ``from package import name`` the module ``package.name`` when there is one, else the
    package (a submodule import runs its package's ``__init__`` but depends on the submodule)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
        targets = set()
        for imported in found:
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def _layer_entries(name: str, layers: tuple[tuple[str, tuple[str, ...]], ...]) -> list[int]:
    """The layers whose entries hold module ``name`` (itself, or a package around it)."""
    found = []
    for rank, (_, entries) in enumerate(layers):
        for entry in entries:
            # A dotted entry is a package too: its modules are in its layer.
            if name == entry or ("." in entry and name.startswith(entry + ".")):
                found.append(rank)
    return found


def layer_problems(
    root: Path, layers: tuple[tuple[str, tuple[str, ...]], ...] = CORE_LAYERS
) -> list[str]:
    """A module in no layer or in two, and every import of a higher layer."""
    graph = _core_graph(root)
    problems = []
    rank: dict[str, int] = {}
    for name in sorted(graph):
        found = _layer_entries(name, layers)
        if len(found) != 1:
            problems.append(f"{name} is in {len(found)} layers")
        else:
            rank[name] = found[0]
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            if name in rank and target in rank and rank[target] > rank[name]:
                problems.append(
                    f"{name} ({layers[rank[name]][0]}) imports {target} ({layers[rank[target]][0]})"
                )
    return problems


def function_imports(root: Path) -> list[str]:
    """``"file imports name"`` for every import of a ``root`` module inside a function:
    one hides a cycle (a lazy import is for a heavy library's start-up time, not core's)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    if name.split(".")[0] == root.name:
                        found.append(f"{path.relative_to(root.parent)} imports {name}")
    return sorted(set(found))


def test_core_modules_import_only_their_layer_and_below() -> None:
    assert layer_problems(CORE) == []


def test_core_has_no_import_cycle() -> None:
    assert cycles(_core_graph(CORE)) == []


# Core modules imported inside a function for start-up time alone: a summary without nvidia-smi
# readings never needs the real-usage judge. It hides no cycle: the cycle check above sees
# imports inside functions too.
START_UP_IMPORTS = frozenset({"core/summary/build.py imports core.usage_assessment"})


def test_no_core_module_is_imported_inside_a_function() -> None:
    assert sorted(set(function_imports(CORE)) - START_UP_IMPORTS) == []


def test_the_core_layers_see_the_real_arrows() -> None:
    # Guard against a vacuous pass: the graph holds the arrows the layers are drawn from.
    graph = _core_graph(CORE)
    assert "core.readings" in graph["core.summary.build"]
    assert "core.summary.build" in graph["core.api"]
    assert "core.views.columns" in graph["core.views.json_view"]
    assert "core.views.changes_view" in graph["core.notify.rules"]


def test_an_upward_import_an_unplaced_module_and_a_hidden_cycle_are_caught(
    tmp_path: Path,
) -> None:
    package = tmp_path / "core"
    (package / "summary").mkdir(parents=True)
    (package / "views").mkdir()
    for init in ("__init__.py", "summary/__init__.py", "views/__init__.py"):
        (package / init).write_text("")
    (package / "model.py").write_text("")
    (package / "views" / "numbers.py").write_text("from core.model import X\n")
    (package / "summary" / "capacity.py").write_text(
        "from core.views import numbers\ndef f():\n    from core.model import X\n"
    )
    (package / "stray.py").write_text("")
    layers = (
        ("base", ("core", "core.model")),
        ("summary", ("core.summary",)),
        ("views", ("core.views",)),
    )
    assert layer_problems(package, layers) == [
        "core.stray is in 0 layers",
        "core.summary.capacity (summary) imports core.views.numbers (views)",
    ]
    assert function_imports(package) == ["core/summary/capacity.py imports core.model"]
