"""One home per paper constant: ``ledgermind/paper.py``.

Why a test: a literal copy of a paper value in a default (``beta: float = 0.15``,
``.get("gamma", 0.5)``, ``DELTA_READ = 0.15``) is a second home that drifts — the repair
policy's T5 ending could say ``abstain`` while the pipeline says ``keep``. The test parses every module of
the package and fails when a parameter, a dataclass field, a module constant or a ``.get(KEY,
default)`` named after a paper value gets a literal instead of the name from ``ledgermind.paper``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from ledgermind import paper

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "ledgermind" / "paper.py"

#: Names (parameters, fields, mapping keys, module constants) that carry a paper value.
PAPER_NAMES = frozenset(
    {
        "beta",
        "delta_read",
        "relative_read",
        "demote_ecc",
        "demote_ncc",
        "demote_uncited",
        "sigma_verify",
        "sigma_floor",
        "conflict_iou",
        "iou_threshold",
        "repair_budget",
        "per_trigger_budget",
        "jitter_px",
        "retry_jitter_px",
        "t5_ending",
        "repair_costs",
        "costs",
        "gamma",
    }
)
#: Genuine non-paper uses of those names, by "path:name" (none today).
ALLOWED: frozenset[str] = frozenset()


def _literal(node: ast.AST | None) -> bool:
    """A number, string, or tuple/list/dict of them: a value written out instead of named."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_literal(v) for v in node.values)
    if isinstance(node, ast.Lambda):  # default_factory=lambda: {...}
        return _literal(node.body)
    return False


def literal_homes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of every paper-named default, field, constant or ``.get`` default written as a literal."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            yield from ((d.lineno, a.arg) for a, d in pairs if a.arg in PAPER_NAMES and _literal(d))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, value = node.target.id, node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
                value = next(
                    (k.value for k in value.keywords if k.arg in ("default", "default_factory")), None
                )
            if (name.lower() in PAPER_NAMES or name in UPPER_NAMES) and _literal(value):
                yield node.lineno, name
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in UPPER_NAMES and _literal(node.value):
                    yield node.lineno, target.id
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in PAPER_NAMES
            and _literal(node.args[1])
        ):
            yield node.lineno, str(node.args[0].value)


UPPER_NAMES = frozenset(n for n in vars(paper) if n.isupper())


def test_the_home_defines_every_paper_name() -> None:
    assert {
        "BETA",
        "DELTA_READ",
        "SIGMA_FLOOR",
        "CONFLICT_IOU",
        "PER_TRIGGER_BUDGET",
        "RETRY_JITTER_PX",
        "T5_ENDING",
        "REPAIR_COSTS",
        "GAMMA",
    } <= UPPER_NAMES


def test_the_detector_sees_each_kind_of_second_home() -> None:
    source = """
DELTA_READ = 0.15
def f(x, beta=0.15, *, sigma_floor: float = 0.3, gamma=paper.GAMMA): ...
class C:
    jitter_px: tuple[int, int] = (15, 40)
    repair_costs: dict = field(default_factory=lambda: {"ACTION": 2.0})
    seed: int = 0
g = cfg.get("gamma", 0.5)
h = cfg.get("gamma", paper.GAMMA)
"""
    found = sorted(name for _, name in literal_homes(ast.parse(source)))
    assert found == ["DELTA_READ", "beta", "gamma", "jitter_px", "repair_costs", "sigma_floor"]


def test_no_paper_value_has_a_second_home() -> None:
    found = []
    for path in sorted((ROOT / "ledgermind").rglob("*.py")):
        if path == HOME:
            continue
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{rel}:{line}: {name}" for line, name in literal_homes(tree) if f"{rel}:{name}" not in ALLOWED
        ]
    assert not found, "paper values written outside ledgermind/paper.py:\n" + "\n".join(found)


def test_lower_layers_default_to_the_pipeline_config() -> None:
    """What a test or a script gets by constructing a mechanism with no arguments is what a run gets."""
    from ledgermind.ledger import Ledger
    from ledgermind.metrics.faithfulness import summarize
    from ledgermind.pipeline.config import PipelineConfig
    from ledgermind.repair.policy import Budget, View
    from ledgermind.repair.reinvocation import Perturbation
    from ledgermind.repair.verifier import Verifier
    from ledgermind.scoring.numeric import NumericTolerance

    cfg = PipelineConfig()
    view = View(Ledger(), {}, {}, Budget(cfg.repair_budget))
    assert view.t5_ending.value == cfg.t5_ending and view.m0 == cfg.per_trigger_budget
    assert Perturbation().jitter_px == cfg.retry_jitter_px
    verifier = Verifier(Ledger(), lambda c: None)
    assert (verifier.beta, verifier.sigma_floor, verifier.conflict_iou) == (
        cfg.grounding.beta,
        cfg.sigma_floor,
        cfg.conflict_iou,
    )
    assert NumericTolerance().relative_read == cfg.grounding.delta_read
    assert summarize([], [], cfg.gamma)["gamma"] == paper.GAMMA
