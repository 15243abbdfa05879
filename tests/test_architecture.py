"""The core stays platform-free: importing every module under bot/ loads no platform SDK."""

import ast
import subprocess
import sys

from support import REPO


def test_bot_imports_no_platform_sdk() -> None:
    script = (
        "import pkgutil, importlib, sys, bot\n"
        "for m in pkgutil.walk_packages(bot.__path__, 'bot.'): importlib.import_module(m.name)\n"
        "loaded = sorted(n for n in sys.modules if n.split('.')[0] in ('slack_bolt', 'slack_sdk', 'discord'))\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"bot/ loaded platform modules: {out.stdout.strip()}"


def test_walk_finds_the_core_modules() -> None:
    """Guards the test above against walking nothing."""
    import pkgutil

    import bot

    names = {m.name for m in pkgutil.walk_packages(bot.__path__, "bot.")}
    assert {"bot.runtime.app", "bot.store", "bot.features.quiz", "bot.features.rounds", "bot.content"} <= names


# ---------------------------------------------------------------- the import graph

FEATURES = ("quiz", "rounds", "glossary", "teachback", "review", "progress", "leaderboard", "results", "forget",
            "audit", "insights", "lessons", "streaks", "timezone", "teams")


def import_graph() -> dict[str, set[str]]:
    """Every module of bot/ and adapters/ with the project modules it imports (even under
    TYPE_CHECKING: a cycle of types is a cycle of knowledge)."""
    modules = {}
    for package in ("bot", "adapters"):
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph, one path each (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_modules_import_without_a_cycle() -> None:
    graph = import_graph()
    assert {"bot.runtime.app", "bot.features.quiz", "bot.store", "adapters.cli"} <= set(graph)  # the walk found them
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_never_imports_the_edge_and_features_never_import_the_router() -> None:
    graph = import_graph()
    core = {m: edges for m, edges in graph.items() if m.split(".")[0] == "bot"}
    assert not {m: e for m, e in core.items() if any(t.startswith("adapters") for t in e)}
    assert not [f for f in FEATURES if "bot.runtime.app" in graph[f"bot.features.{f}"]]
    assert "bot.features.quiz" in graph["bot.runtime.app"]  # the router depends on the features


# What each package of bot/ may import: a package reaches only the ones below it. Grading is pure (it
# knows only rubrics and text); the store knows no feature and no question type; features never reach the router.
_DATA = {"bot.store", "bot.content", "bot.questions", "bot.core", "bot.grading"}
BELOW = {
    "bot.grading": set(),
    "bot.core": {"bot.grading"},
    "bot.questions": {"bot.core", "bot.grading"},
    "bot.content": {"bot.questions", "bot.core", "bot.grading"},
    "bot.store": {"bot.core", "bot.grading"},
    "bot.kit": _DATA,
    "bot.interchange": {"bot.reports"} | _DATA,
    "bot.reports": {"bot.kit.context"} | _DATA,
    "bot.answering": {"bot.kit", "bot.reports"} | _DATA,
    "bot.features": {"bot.answering", "bot.kit", "bot.reports"} | _DATA,
    "bot.runtime": {"bot.features", "bot.answering", "bot.kit", "bot.reports"} | _DATA,
}

# The few places one feature uses another's module, each for a reason (docs/architecture.md lists them).
FEATURE_PAIRS = {
    ("bot.features.audit", "bot.features.disputes"),  # /audit disputes is the disputes' own listing
    ("bot.features.progress", "bot.features.tracks"),  # /progress shows the learner's next track step
    ("bot.features.disputes", "bot.features.reader"),  # the listing shows the second reader's reading
}


def _allowed(module: str, target: str) -> bool:
    package = ".".join(module.split(".")[:2])
    return any(target == p or target.startswith(p + ".") for p in {package} | BELOW[package])


def test_each_package_imports_only_the_packages_below_it() -> None:
    graph = import_graph()
    layered = {m: e for m, e in graph.items() if ".".join(m.split(".")[:2]) in BELOW}
    assert {m: sorted(t for t in e if not _allowed(m, t)) for m, e in layered.items()
            if any(not _allowed(m, t) for t in e)} == {}
    assert {"bot.grading.matching", "bot.features.quiz", "bot.store.answers", "bot.answering.pipeline",
            "bot.kit.context", "bot.runtime.app"} <= set(layered)  # the walk found them


def test_features_use_each_other_only_where_listed() -> None:
    """Answering, the kit and the reports are rooms of their own: a feature reaches another only in
    the listed pairs (answering's modes and offers are declared, never imported)."""
    graph = import_graph()

    def feature(module: str) -> str:  # a feature's folder is one feature: bot.features.disputes.storage
        return ".".join(module.split(".")[:3])

    pairs = {(feature(m), feature(t)) for m, edges in graph.items() if m.startswith("bot.features.")
             for t in edges if t.startswith("bot.features.") and feature(t) != feature(m)}
    assert pairs == FEATURE_PAIRS and len(pairs) <= 3


def test_the_layer_check_finds_a_wrong_import() -> None:
    assert not _allowed("bot.grading.matching", "bot.store")
    assert not _allowed("bot.features.quiz", "bot.runtime.app")
    assert not _allowed("bot.store.answers", "bot.questions.base")
    assert _allowed("bot.features.quiz", "bot.kit.context")
    assert not _allowed("bot.answering.pipeline", "bot.features.quiz")
    assert not _allowed("bot.kit.context", "bot.answering.pipeline")
