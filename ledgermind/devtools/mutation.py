"""Mutation testing of the paper-critical modules (``make mutation``). Not part of CI.

Each *module* below names the source files it mutates and the tests that cover them. mutmut
(pinned in the ``dev`` extra) runs one module at a time in its own scratch folder
(``build/mutation/<module>/``: a generated ``pyproject.toml`` with that module's
``[tool.mutmut]`` section, links to the tree), so a module's mutants meet only its own tests and
its cache survives between runs. mutmut copies the sources into ``mutants/`` there, collects which
test reaches which function once, then runs each mutant against exactly those tests, forked from a
warm process.

    make mutation                                  every module, one worker
    make mutation MODULES="ledger triggers"        only those
    PYTHONPATH=. .venv/bin/python scripts/mutation.py --list

The table it prints (killed / survived / timeout / no-tests / kill rate, per module) is the
benchmark-style report of docs/mutation.md; ``--survivors`` lists the surviving mutants by name
with their changed line (``mutmut show NAME`` inside the module's folder prints the diff).

Accepted survivors: the "Accepted survivors" section of docs/mutation.md is a table whose first
cell is a mutant-name glob in backticks (then file:function, class, reason). A survivor matching
one is *accepted* (an equivalent mutant or another stated reason); the table reports the kill
rate raw and excluding accepted mutants, ``--survivors`` marks each survivor ``accepted`` or
``UNCLASSIFIED``, and ``--check`` exits 1 while any survivor is unclassified or any accepted
pattern matches no survivor (stale: the source changed and mutmut renumbered its mutants).
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.confutil import shared_data_dir

REPO = Path(__file__).resolve().parents[2]
WORK = REPO / "build" / "mutation"
ACCEPTED_DOC = REPO / "docs" / "mutation.md"
ACCEPTED_HEADING = "## Accepted survivors"
SHARED_DATA = shared_data_dir()
LINKED = ("ledgermind", "perception", "tests", "conf", "scripts")  # what the tests import or read
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not slow and not hf and not vllm"]


@dataclass(frozen=True)
class Module:
    """One unit of ``make mutation``: the files it mutates, the paper-critical functions in them
    (``file.py:Class.method``, ``file.py:function`` or ``file.py:*``, every function and method of
    the file; the kill rate is over their mutants) and the tests that cover them."""

    functions: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.split(":")[0] for f in self.functions))

    def globs(self) -> list[str]:
        """mutmut's mutant-name globs of the functions (``pkg.mod.xǁClassǁmethod__mutmut_N``)."""
        out = []
        for spec in self.functions:
            path, name = spec.split(":")
            mod = path.removesuffix(".py").replace("/", ".")
            cls, _, meth = name.rpartition(".")
            stem = "*" if name == "*" else f"\u01c1{cls}\u01c1{meth}" if cls else f"_{meth}"
            out.append(f"{mod}.x{stem}__mutmut_*")
        return out


def _in(path: str, *names: str) -> tuple[str, ...]:
    """``path:name`` for each function or method ``name`` of one source file."""
    return tuple(f"{path}:{n}" for n in names)


L, G, D, R, P = (
    "ledgermind/ledger/",
    "ledgermind/grounding/",
    "ledgermind/dispatch/",
    "ledgermind/repair/",
    "ledgermind/pipeline/",
)
MODULES: dict[str, Module] = {
    "ledger": Module(  # Eq. 1 / Alg. 1 l.24 S(c), §3.2 leaf resolution, Eqs. 12–15
        tuple(
            f"{L}ledger.py:Ledger.{m}"
            for m in (
                "record",
                "mark_stale",
                "supersede",
                "retire",
                "reinstate",
                "drop",
                "mark_conflicted",
                "resolve_conflict",
                "active",
                "leaves",
                "_collect_leaves",
                "cited_entries",
                "_cited",
                "support",
                "leaf_pool",
                "affected",
            )
        )
        + _in(f"{L}entry.py", "EvidenceEntry.active", "EvidenceEntry.is_expired"),
        ("tests/ledger", "tests/repair/test_provenance_property.py"),
    ),
    "grounding": Module(  # Eqs. 3–5, Alg. 1 l.28/l.33, §3.4 g(c)
        _in(f"{G}coverage.py", "support_coverage", "_literal_support")
        + _in(f"{G}tokens.py", "content_tokens", "canonical_token")
        + _in(f"{G}ncc.py", "check_ncc", "_matched", "number_supported", "_relative_close")
        + _in(f"{G}ecc.py", "check_ecc", "_supported")
        + _in(f"{G}cascade.py", "GroundingCascade.check", "demoted_sigma"),
        tuple(
            f"tests/grounding/test_{t}.py" for t in ("paper_grounding", "coverage", "ncc", "ecc", "cascade")
        ),
    ),
    "dispatch": Module(  # Eq. 6 φ(q), App. D.1 Conditions 1–5
        _in(
            f"{D}classifier.py",
            "classify",
            "ascii_alpha_ratio",
            "mcq_letters",
            "_verification_hits",
            "strip_image_placeholders",
        ),
        ("tests/dispatch",),
    ),
    "repair": Module(  # Eqs. 16–21 (T1–T6), Eq. 25 Π, Eq. 26 RC, budget M / M0
        _in(
            f"{R}triggers.py",
            "t1_tool_anomaly",
            "t2_stale_reference",
            "t3_conflicts",
            "_differs",
            "t4_confidence_drop",
            "t5_unsupported_decision",
            "t6_phantom_grounding",
        )
        + _in(
            f"{R}policy.py",
            *(f"Budget.{m}" for m in ("available", "spend", "reserve", "spend_reserved", "release")),
            "cost",
            "plan",
            "_t1",
            "_switch",
            "_t2",
            "_unrepaired",
            "has_decision_dependent",
            "_t3",
            "_t4",
            "_t5",
            "_t5_end",
            "_t6",
        ),
        ("tests/repair",),
    ),
    "metrics": Module(  # Eqs. 7–10, 27–31, McNemar
        tuple(
            f"ledgermind/metrics/faithfulness.py:{f}"
            for f in (
                "ucr_reason",
                "decision_claims_in_force",
                "gdr",
                "eur",
                "rr",
                "rc",
                "se",
                "r4r",
                "wdg",
                "_ratio",
            )
        )
        + _in("ledgermind/metrics/stats.py", "mcnemar_exact", "discordant_pairs"),
        tuple(f"tests/metrics/test_{t}.py" for t in ("metrics", "stats", "paper_metrics")),
    ),
    "scoring": Module(  # the official MMMU-Pro parser (parity), numeric tolerance
        _in("ledgermind/scoring/mmmu.py", "parse_multi_choice_response", "_strip_each", "_last")
        + _in("ledgermind/scoring/numeric.py", "numbers_match"),
        ("tests/scoring",),
    ),
    "gates": Module(  # Alg. 1 l.22–44, App. D.5, Eq. 6 with the ablations
        _in(f"{P}fullpipe.py", "grounded_reasoning", "hypothesis_verification", "_revises")
        + _in(f"{P}gather.py", "dual_read", "escalate_dual_read")
        + _in(f"{P}agent.py", "choose_path")
        + _in(f"{P}baselines.py", "run_no_ledger"),
        ("tests/pipeline/test_paper_alg1.py", "tests/pipeline/test_agent_branches.py"),
    ),
    "pipeline": Module(  # the per-item executor: every tool call and repair action, Prop. 1
        (f"{P}executor.py:*",),
        ("tests/pipeline", "tests/repair"),
    ),
}

# mutmut's exit code per mutant → verdict (as mutmut.stats.status_by_exit_code; a crash of the
# forked test process — segfault, killed — is a detected change, so it counts as killed here)
VERDICTS = {
    code: verdict
    for verdict, codes in {
        "killed": (1, 3, -11, -9),
        "survived": (0,),
        "no_tests": (5, 33),
        "skipped": (34,),
        "timeout": (36, -24, 24, 152, 255),
    }.items()
    for code in codes
}


def prepare(name: str, mod: Module) -> Path:
    """The module's scratch folder: links to the tree and a pyproject with its mutmut section."""
    d = WORK / name
    d.mkdir(parents=True, exist_ok=True)
    for entry in LINKED:
        link = d / entry
        if link.is_symlink() and link.resolve() != (REPO / entry).resolve():
            link.unlink()  # a folder copied from another worktree points at that tree's sources
        if not link.is_symlink():
            if link.exists():
                shutil.rmtree(link)
            link.symlink_to(REPO / entry)
    pytest_ini = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    cfg = {
        "source_paths": ["ledgermind"],
        "only_mutate": list(mod.sources),
        "also_copy": ["perception", "conf", "scripts"],
        "pytest_add_cli_args": PYTEST_ARGS,
        # a test file the tree does not have (yet) is left out, so an older tree measures too
        "pytest_add_cli_args_test_selection": [t for t in mod.tests if (REPO / t).exists()],
        "use_git_change_detection": False,
    }
    (d / "pyproject.toml").write_text(_toml({"tool.mutmut": cfg, "tool.pytest.ini_options": pytest_ini}))
    return d


def run(name: str, max_children: int, keep: bool = False) -> None:
    """Run mutmut for one module (``keep``: reuse the last run's mutants, test map and verdicts; by
    default everything is regenerated, since mutmut cannot see a changed test file behind the
    links); ``table`` reads its verdicts back."""
    d = prepare(name, MODULES[name])
    if not keep:
        shutil.rmtree(d / "mutants", ignore_errors=True)
    env = dict(os.environ, LEDGERMIND_SHARED_DATA=str(SHARED_DATA), PYTHONPATH="")
    mutmut = Path(sys.executable).with_name("mutmut")
    cmd = [str(mutmut), "run", "--max-children", str(max_children), *MODULES[name].globs()]
    subprocess.run(cmd, cwd=d, env=env, check=False)


def results(name: str) -> dict[str, str]:
    """mutant name → verdict, read from mutmut's ``.meta`` files (nothing is run)."""
    out: dict[str, str] = {}
    sources, globs = set(MODULES[name].sources), MODULES[name].globs()
    for meta in (WORK / name / "mutants").rglob("*.py.meta"):
        rel = str(meta.relative_to(WORK / name / "mutants")).removesuffix(".meta")
        if rel not in sources:
            continue
        data = json.loads(meta.read_text())
        for key, code in data.get("exit_code_by_key", {}).items():
            if any(fnmatch.fnmatchcase(key, g) for g in globs):
                out[key] = "not_run" if code is None else VERDICTS.get(code, f"exit_{code}")
    return out


def describe(name: str, key: str) -> str:
    """The changed line of mutant ``key``: ``original  →  mutated`` (from mutmut's mutants file,
    which holds every variant of a function beside its ``__mutmut_orig``)."""
    mod, _, fn = key.rpartition(".")  # "pkg.mod", "xǁClassǁmeth__mutmut_3"
    path = WORK / name / "mutants" / (mod.replace(".", "/") + ".py")
    if not path.exists():
        return "?"
    src, stem = path.read_text(), fn.rsplit("__mutmut_", 1)[0]
    bodies = {
        node.name: (ast.get_source_segment(src, node) or "").splitlines()[1:]
        for node in ast.walk(ast.parse(src))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name in {fn, f"{stem}__mutmut_orig"}
    }
    orig, mut = bodies.get(f"{stem}__mutmut_orig", []), bodies.get(fn, [])
    changed = [(a.strip(), b.strip()) for a, b in zip(orig, mut, strict=False) if a != b]
    return "; ".join(f"{a}  →  {b}" for a, b in changed) or "?"


def accepted_patterns(doc: Path = ACCEPTED_DOC) -> list[str]:
    """Mutant-name globs of the "Accepted survivors" section of docs/mutation.md: every table row
    in that section whose first cell is a backticked glob (the rest of the row says why)."""
    if not doc.exists():
        return []
    out, inside = [], False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line.strip() == ACCEPTED_HEADING
        elif inside and line.startswith("|"):
            first = line.strip("|").split("|")[0].strip()
            if len(first) > 2 and first.startswith("`") and first.endswith("`"):
                out.append(first.strip("`"))
    return out


def classify(verdicts: dict[str, str], patterns: list[str]) -> dict[str, str]:
    """Each survivor (survived / no tests) → ``accepted`` or ``UNCLASSIFIED``."""
    return {
        key: "accepted" if any(fnmatch.fnmatchcase(key, p) for p in patterns) else "UNCLASSIFIED"
        for key, v in verdicts.items()
        if v in {"survived", "no_tests"}
    }


def stale_patterns(names: list[str], patterns: list[str]) -> list[str]:
    """Accepted patterns of these modules' functions that match no survivor of the last runs."""
    survivors = [k for n in names for k, v in results(n).items() if v in {"survived", "no_tests"}]
    globs = [g for n in names for g in MODULES[n].globs()]
    mine = [p for p in patterns if any(fnmatch.fnmatchcase(p, g) for g in globs)]
    return [p for p in mine if not any(fnmatch.fnmatchcase(k, p) for k in survivors)]


def table(names: list[str], patterns: list[str]) -> str:
    """The benchmark-style table, one row per module: kill rate = killed / (killed + survived +
    no tests); "excl. accepted" leaves the accepted survivors out of the denominator."""
    rows = [
        "| module | mutants | killed | survived | timeout | no tests | accepted | unclassified "
        "| kill rate | excl. accepted |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        verdicts = results(name)  # mutants per verdict, and survivors per label (accepted / UNCLASSIFIED)
        c = Counter(verdicts.values()) + Counter(classify(verdicts, patterns).values())
        judged = c["killed"] + c["survived"] + c["no_tests"]
        rate = f"{100 * c['killed'] / judged:.1f} %" if judged else "—"
        rate_ex = f"{100 * c['killed'] / (judged - c['accepted']):.1f} %" if judged - c["accepted"] else "—"
        cells = [c[k] for k in ("killed", "survived", "timeout", "no_tests", "accepted", "UNCLASSIFIED")]
        rows.append(f"| {name} | {len(verdicts)} | {' | '.join(map(str, cells))} | {rate} | {rate_ex} |")
    return "\n".join(rows)


def _toml(tables: dict[str, dict[str, Any]]) -> str:
    """TOML of flat tables whose keys are bare words and values str/bool/number/list: JSON spells
    those values as TOML does."""
    return "".join(
        f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
        for name, table in tables.items()
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modules", default="", help="space- or comma-separated module names (default: all)")
    p.add_argument(
        "--max-children", type=int, default=1, help="parallel mutant workers (default 1: shared cores)"
    )
    for flag, help_ in (
        ("--keep", "reuse the last run's mutants and verdicts"),
        ("--report", "only print the table of the last runs (runs nothing)"),
        ("--survivors", "list surviving mutants of the modules (runs nothing)"),
        ("--list", "list the modules, their sources and tests"),
        (
            "--check",
            "exit 1 if a survivor is neither killed nor accepted, or an accepted pattern is stale (runs nothing)",
        ),
    ):
        p.add_argument(flag, action="store_true", help=help_)
    a = p.parse_args(argv)
    names = [m for m in a.modules.replace(",", " ").split() if m] or list(MODULES)
    unknown = [m for m in names if m not in MODULES]
    if unknown:
        print(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}", file=sys.stderr)
        return 2
    if a.list:
        for n in names:
            print(f"{n}: {' '.join(MODULES[n].functions)}\n    tests: {' '.join(MODULES[n].tests)}")
        return 0
    never_run = [n for n in names if not (WORK / n / "mutants").is_dir()]
    if (a.check or a.report or a.survivors) and never_run:
        # Without a run there is nothing to read: every accepted row would look stale, every count 0.
        print(
            f"no mutation run recorded for {', '.join(never_run)} under {WORK}; run it first: "
            f"scripts/mutation.py --modules {' '.join(never_run)}",
            file=sys.stderr,
        )
        return 2
    patterns = accepted_patterns()
    if a.survivors:
        for n in names:
            verdicts = results(n)
            for key, label in sorted(classify(verdicts, patterns).items()):
                print(f"{n}\t{verdicts[key]}\t{label}\t{key}\t{describe(n, key)}")
        return 0
    if a.check:
        bad = [k for n in names for k, lab in classify(results(n), patterns).items() if lab == "UNCLASSIFIED"]
        stale = stale_patterns(names, patterns)
        for k in bad:
            print(f"UNCLASSIFIED\t{k}")
        for p_ in stale:
            print(f"STALE accepted pattern (matches no survivor)\t{p_}")
        print(table(names, patterns))
        return 1 if bad or stale else 0
    if not a.report:
        for n in names:
            run(n, a.max_children, a.keep)
    print(table(names, patterns))
    return 0
