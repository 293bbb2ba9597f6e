"""The import structure as ``docs/architecture.md`` states it: layers, no circles, no production
import of the test instrument.

Why parse instead of import: importing a module runs it (registries, heavy optional dependencies);
``ast`` reads every import statement, those inside functions and ``TYPE_CHECKING`` blocks included,
so a lazy import cannot hide an arrow. The layer order has one home, the ``layers`` block of
``docs/architecture.md``; this test reads it from there.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledgermind.devtools.loc import logical_lines

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
INSTRUMENT = "instrument"  # the layer above every other: production never imports it
SIMULATOR = "ledgermind.simulator"
NOT_PRODUCTION = ("ledgermind/simulator/", "ledgermind/testing/", "tests/")
SIMULATOR_TOOLING = re.compile(r"scripts/sim_\w+\.py")  # the simulator's own entry points

# Accepted violations, by (from room, to room), each with its reason; every entry is checked to
# still exist, so a fixed one fails as stale. None is accepted.
KNOWN_VIOLATIONS: Mapping[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    """One imported module name, as written in ``source`` (a path relative to the repo root)."""

    source: str
    module: str
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    """Every module ``path`` imports (relative imports resolved), wherever the statement sits."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    source = path.relative_to(root).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(source, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield Import(source, base, node.lineno)
            for alias in node.names:  # ``from ledgermind import simulator`` imports a module too
                yield Import(source, f"{base}.{alias.name}", node.lineno)


def room_of(module: str) -> str | None:
    """``ledgermind.<first>`` or ``perception``; None for third-party and other modules."""
    parts = module.split(".")
    if parts[0] == "perception":
        return "perception"
    if parts[0] == "ledgermind" and len(parts) > 1:
        return parts[1]
    return None


def python_files(root: Path, *dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (root / d).rglob("*.py"))


def rooms_in(root: Path) -> set[str]:
    return {r for p in python_files(root, "ledgermind", "perception") if (r := room_of(module_name(p, root)))}


def room_edges(root: Path) -> dict[tuple[str, str], list[Import]]:
    """(from room, to room) -> the imports that make the arrow, for arrows between different rooms."""
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    known = rooms_in(root)  # ``from ledgermind import X`` names a room only when X is one
    for path in python_files(root, "ledgermind", "perception"):
        here = room_of(module_name(path, root))
        for imp in imports_of(path, root):
            there = room_of(imp.module)
            if here and there and there != here and there in known:
                edges[(here, there)].append(imp)
    return dict(edges)


def layer_order(doc: Path = DOC) -> dict[str, int]:
    """Room -> layer from the ``layers`` block of the architecture doc (the instrument above all)."""
    block = re.search(r"```layers\n(.*?)```", doc.read_text(encoding="utf-8"), re.DOTALL)
    assert block, f"{doc} has no ```layers block"
    layers: dict[str, int] = {}
    for line in block.group(1).strip().splitlines():
        head, _, rooms = line.partition(":")
        level = 10**6 if head.strip() == INSTRUMENT else int(head.split()[0])
        for room in rooms.split():
            assert room not in layers, f"room {room!r} is in two layers"
            layers[room] = level
    return layers


def is_simulator(module: str) -> bool:
    return module == SIMULATOR or module.startswith(SIMULATOR + ".")


def production_simulator_imports(root: Path) -> list[Import]:
    """Imports of ``ledgermind.simulator`` from any module that is not the instrument or a test."""
    found = []
    for path in python_files(root, "ledgermind", "perception", "scripts"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(NOT_PRODUCTION) or SIMULATOR_TOOLING.fullmatch(rel):
            continue
        found += [i for i in imports_of(path, root) if is_simulator(i.module)]
    return list({(i.source, i.line): i for i in found}.values())  # one per statement


def upward_arrows(
    edges: Mapping[tuple[str, str], list[Import]], layers: Mapping[str, int]
) -> list[tuple[str, str]]:
    return sorted((a, b) for a, b in edges if layers[b] > layers[a])


def circles(arrows: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of two or more rooms (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in arrows:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            group.append(v)
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted({x for edge in arrows for x in edge}):
        if v not in index:
            visit(v)
    return sorted(found)


def _where(imports: list[Import]) -> str:
    return ", ".join(f"{i.source}:{i.line}" for i in imports[:3])


# ---------------------------------------------------------------------------------------- the tests
@pytest.fixture(scope="module")
def edges() -> dict[tuple[str, str], list[Import]]:
    return room_edges(ROOT)


def test_every_room_has_one_layer_in_the_doc() -> None:
    layers = layer_order()
    assert sorted(rooms_in(ROOT) - set(layers)) == [], "rooms missing from docs/architecture.md's layers"
    assert sorted(set(layers) - rooms_in(ROOT)) == [], "layers name rooms that do not exist"


def test_no_production_module_imports_the_simulator() -> None:
    found = production_simulator_imports(ROOT)
    assert not found, "\n".join(f"{i.source}:{i.line} imports {i.module}" for i in found)


def test_no_import_runs_up_the_layers(edges) -> None:
    up = [e for e in upward_arrows(edges, layer_order()) if e not in KNOWN_VIOLATIONS]
    assert not up, "\n".join(f"{a} -> {b} ({_where(edges[(a, b)])})" for a, b in up)


def test_no_import_circle_between_rooms(edges) -> None:
    found = circles(set(edges) - set(KNOWN_VIOLATIONS))
    assert not found, f"import circles between rooms: {found}"


def test_known_violations_are_still_real(edges) -> None:
    """An allow-list entry whose arrow is gone hides the next regression: delete it once fixed."""
    stale = sorted(set(KNOWN_VIOLATIONS) - set(edges))
    assert not stale, f"remove these fixed entries from KNOWN_VIOLATIONS: {stale}"


def test_the_checks_see_what_they_check(tmp_path: Path) -> None:
    """The scanner on a small tree: a lazy relative import of the simulator, an upward arrow, a circle."""
    for rel, text in {
        "ledgermind/__init__.py": "",
        "ledgermind/low/__init__.py": "def f():\n    from ..high import g\n",
        "ledgermind/high/__init__.py": "from ledgermind.low import f\nfrom ledgermind import simulator\n",
        "ledgermind/simulator/__init__.py": "",
        "perception/__init__.py": "import ledgermind.low\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    edges = room_edges(tmp_path)
    assert set(edges) == {("low", "high"), ("high", "low"), ("high", "simulator"), ("perception", "low")}
    layers = {"low": 0, "high": 1, "simulator": 2, "perception": 1}
    assert upward_arrows(edges, layers) == [("high", "simulator"), ("low", "high")]
    assert circles(set(edges)) == [["high", "low"]]
    assert [(i.source, i.module) for i in production_simulator_imports(tmp_path)] == [
        ("ledgermind/high/__init__.py", "ledgermind.simulator")
    ]


# Rooms a newcomer reads end to end: a module that outgrows this many logical lines (code only, as
# ledgermind.devtools.loc counts them) is two concepts.
SHORT_ROOMS, MAX_MODULE_LINES = ("runs", "cli", "pipeline", "experiment", "report"), 300


def test_the_rooms_a_newcomer_reads_have_short_modules() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for room in SHORT_ROOMS
        for p in sorted((ROOT / "ledgermind" / room).glob("*.py"))
        if (n := logical_lines(p.read_text(encoding="utf-8"))) > MAX_MODULE_LINES
    }
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_run_folder_format_has_one_room() -> None:
    """Every file name of a run folder is defined in ``runs/files.py`` only (readers import it)."""
    names = ("results.jsonl", "metrics.json", "run_identity.json", "wall_time.json")
    defined = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted((ROOT / "ledgermind").rglob("*.py"))
        if p != ROOT / "ledgermind" / "runs" / "files.py"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*[A-Z_]+\s*=\s*[\"']({})[\"']".format("|".join(map(re.escape, names))), line)
    ]
    assert defined == [], f"a second home of a run-folder file name: {defined}"
