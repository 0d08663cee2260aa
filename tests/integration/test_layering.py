"""The house rules of runner's layout, read from the code's own imports.

Every import counts: at the top of a module, inside a function, and under `TYPE_CHECKING`
(a type-only import ties two modules as surely as any other when one of them moves).

- No import circle between any two modules of `runner/`.
- Imports flow one way down `LAYERS`: a module may import its own room, or a room of a lower
  layer; never a room of its own layer or of a layer above it.
- At most eight modules sit loose at `runner/`'s top, each an entry point or a leaf shared by
  several rooms, and each says why in the first line of its docstring.

A test, not a convention, because one stray import is all it takes to turn the layers into a knot.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "runner"

# Top to bottom. A room is a package under runner/ (runner.engine) or a module loose at the top
# (runner.trace). The faces (the CLI, the playground, the service) sit above the application
# layer they share; the engine and retrieval know nothing of tools or sessions; the leaves at
# the bottom import nothing of runner but lower leaves.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("demo",),  # `make demo`: the guided tour, through the command line
    ("cli",),  # the commands; runner.cli.webapp composes the service and the playground
    ("playground", "serve"),  # the web faces: neither imports the other (cli.webapp mounts both)
    ("service",),  # what the faces share: pipelines opened once, rounds run for clients
    ("explain", "testing", "eval"),  # authors' commands' insides
    ("render",),  # how results and errors are shown, by every face
    ("app",),  # the application layer: a run composed, sessions kept
    ("tools", "sessions", "observability"),  # observability: rounds told to OpenTelemetry
    ("engine", "retrieval"),
    ("llm",),
    ("mcp_client",),  # connections to the MCP servers `mcp` tools call, one per server
    ("tables",),  # lookup tables' key indexes
    ("config",),  # pipeline files: schema, checks, the typed model
    ("templating",),  # the sandboxed Jinja environment and its budget
    ("documents", "trace"),  # an author's files read safely; the trace of a round
    ("text", "purposes", "sources", "resources", "embedding"),  # leaves
)
LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}
MAX_TOP_MODULES = 8  # __init__.py included

# The faces call the application layer (and the rooms it lends them), never the insides it
# composes: what a face may not import, though the layers alone would let it.
FACES_KEEP_OUT: dict[str, set[str]] = {
    "serve": {"engine", "tools", "llm", "retrieval", "explain", "testing"},
    "service": {"engine", "tools", "llm", "retrieval", "explain", "testing"},
    "playground": {"engine", "tools", "sessions"},
}


# The rooms that know no web framework: the service stands under every face (the HTTP API, the
# playground, MCP over stdio), so what is HTTP-specific lives in the faces (runner.serve.auth).
FRAMEWORK_FREE = ("service",)
WEB_FRAMEWORKS = {"starlette", "uvicorn", "fastapi", "sse_starlette"}


@dataclass(frozen=True)
class Import:
    importer: str  # runner.engine.round
    imported: str  # runner.engine.channels
    names: tuple[str, ...]  # what was imported: ("Channels", "Stop"), or () for `import x`
    line: int


def module_names() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = module_names()


def _known(name: str) -> str | None:
    """The module `name` is, or the package it is inside of."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports_of(module: str, path: Path) -> list[Import]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if base != "runner" and not base.startswith("runner."):
                continue
            by_target: dict[str, list[str]] = defaultdict(list)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                target = submodule if submodule in MODULES else _known(base)
                if target:
                    by_target[target].append(alias.name)
            found += [
                Import(module, target, tuple(names), node.lineno)
                for target, names in by_target.items()
            ]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name) if alias.name.startswith("runner.") else None
                if target:
                    found.append(Import(module, target, (), node.lineno))
    return [edge for edge in found if edge.imported != module]


IMPORTS = [edge for module, path in MODULES.items() for edge in _imports_of(module, path)]


def outside_imports(path: Path) -> set[str]:
    """The top-level names of what a module imports from outside runner (`starlette`, `json`),
    wherever the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found - {"runner"}


def room_of(module: str) -> str:
    """runner.engine.round -> engine; runner.trace -> trace; runner -> runner."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "runner"


def _describe(edge: Import) -> str:
    names = ", ".join(edge.names) if edge.names else "the module"
    where = MODULES[edge.importer].relative_to(PACKAGE.parent)
    return f"{edge.importer} imports {names} from {edge.imported} ({where}:{edge.line})"


def circles(edges: list[Import]) -> list[list[Import]]:
    """One closed path of imports through each strongly connected group of modules (Tarjan)."""
    graph: dict[str, list[Import]] = defaultdict(list)
    for edge in edges:
        graph[edge.importer].append(edge)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for edge in graph[node]:
            if edge.imported not in index:
                visit(edge.imported)
                low[node] = min(low[node], low[edge.imported])
            elif edge.imported in stack:
                low[node] = min(low[node], index[edge.imported])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_closed_path(graph, group) for group in groups]


def _closed_path(graph: dict[str, list[Import]], group: set[str]) -> list[Import]:
    """A shortest circle through the group's first module, edge by edge (breadth first)."""
    start = min(group)
    came: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in graph[node]:
                if edge.imported == start:
                    path = [edge]
                    while path[0].importer != start:
                        path.insert(0, came[path[0].importer])
                    return path
                if edge.imported in group and edge.imported not in came:
                    came[edge.imported] = edge
                    following.append(edge.imported)
        frontier = following
    raise AssertionError(f"no circle through {start}")  # a strongly connected group has one


def test_no_module_imports_itself_round_a_circle() -> None:
    found = ["\n  ".join(map(_describe, path)) for path in circles(IMPORTS)]
    assert not found, "import circles (type-only imports count):\n  " + "\n\n  ".join(found)


def test_every_room_has_a_layer() -> None:
    rooms = {room_of(module) for module in MODULES} - {"runner"}
    assert sorted(rooms - set(LEVEL)) == [], "add the new room to LAYERS in this test"


def test_imports_flow_one_way_down_the_layers() -> None:
    against = [
        f"{_describe(edge)}: {room_of(edge.importer)} (layer {LEVEL[room_of(edge.importer)]}) "
        f"may not import {room_of(edge.imported)} (layer {LEVEL[room_of(edge.imported)]})"
        for edge in IMPORTS
        if room_of(edge.importer) in LEVEL
        and room_of(edge.imported) in LEVEL
        and room_of(edge.importer) != room_of(edge.imported)
        and LEVEL[room_of(edge.imported)] <= LEVEL[room_of(edge.importer)]
    ]
    assert not against, "imports against the layer order:\n  " + "\n  ".join(against)


@pytest.mark.parametrize("face", sorted(FACES_KEEP_OUT))
def test_a_face_reaches_the_engine_only_through_the_application_layer(face: str) -> None:
    reaching_in = [
        _describe(edge)
        for edge in IMPORTS
        if room_of(edge.importer) == face and room_of(edge.imported) in FACES_KEEP_OUT[face]
    ]
    assert not reaching_in, f"{face} reaches past the application layer:\n  " + "\n  ".join(
        reaching_in
    )


@pytest.mark.parametrize("room", FRAMEWORK_FREE)
def test_issue_30_a_framework_free_room_imports_no_web_framework(room: str) -> None:
    found = [
        f"{module} imports {', '.join(sorted(outside_imports(path) & WEB_FRAMEWORKS))}"
        for module, path in sorted(MODULES.items())
        if room_of(module) == room and outside_imports(path) & WEB_FRAMEWORKS
    ]
    assert not found, f"runner.{room} is meant to stand under every face:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("room", FRAMEWORK_FREE)
def test_importing_a_framework_free_room_loads_no_web_framework(room: str) -> None:
    import subprocess
    import sys

    modules = sorted(module for module in MODULES if room_of(module) == room)
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; import {', '.join(modules)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    ).stdout
    assert not set(ast.literal_eval(loaded)) & WEB_FRAMEWORKS, loaded


def test_at_most_eight_modules_sit_at_the_top() -> None:
    loose = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(loose) <= MAX_TOP_MODULES, f"{len(loose)} modules at runner/'s top: {loose}"


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda path: path.name)
def test_a_top_module_says_why_it_lives_there(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert docstring.strip(), f"{path.name}: a top-level module needs a docstring saying why"


# --- the checker itself: it must catch what it is for ----------------------------------------


def _edge(importer: str, imported: str, *names: str) -> Import:
    return Import(f"runner.{importer}", f"runner.{imported}", names, 1)


def test_the_circle_finder_names_each_step_of_a_circle() -> None:
    found = circles([_edge("a", "b", "B"), _edge("b", "c", "C"), _edge("c", "a", "A")])
    assert [(edge.importer, edge.imported) for edge in found[0]] == [
        ("runner.a", "runner.b"),
        ("runner.b", "runner.c"),
        ("runner.c", "runner.a"),
    ]


def test_the_circle_finder_passes_a_tree() -> None:
    assert circles([_edge("a", "b"), _edge("a", "c"), _edge("b", "c")]) == []


def test_type_only_imports_are_read() -> None:
    round_imports = {edge.imported for edge in IMPORTS if edge.importer == "runner.engine.round"}
    assert "runner.engine.setup" in round_imports  # imported under TYPE_CHECKING only
