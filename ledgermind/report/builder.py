"""Writes the static HTML report of a run or a multirun: ``report/index.html`` + one page per item.

Pages come from Jinja2 templates with autoescaping on for every template: text from models,
tools and datasets is only ever passed to templates as data, never concatenated into HTML, so a
reply containing ``<script>`` renders as text. The report is self-contained (CSS, JS and images
beside the pages) and opens from disk with no server and no network.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from ledgermind.benchmarks.item import Item
from ledgermind.errors import DataError, UserError
from ledgermind.experiment.artefact_label import ArtefactLabel, combined, label_for
from ledgermind.report.census_table import grouped
from ledgermind.report.images import ImageStore
from ledgermind.report.item_view import ItemView, build_item_view
from ledgermind.report.run_view import backend_label, build_run_view, headline, item_href
from ledgermind.report.sources import RunData, load_run
from ledgermind.runs.atomic import atomic_write, inside
from ledgermind.runs.files import REPORT_DIR
from ledgermind.runs.reader import find_runs
from ledgermind.runs.results import ItemResult
from ledgermind.runs.trajectories import safe_filename

MARKER = ".ledgermind-report"  # only a directory carrying this marker is ever replaced
ASSETS = ("report.css", "report.js")


def environment(banner: ArtefactLabel | None = None) -> Environment:
    """The templates, with the report's label (SIMULATED / REPLAYED / TINY MODEL) on every page: a
    page opened alone still says what answered."""
    env = Environment(
        loader=PackageLoader("ledgermind.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(grouped=grouped, banner=banner)
    return env


@dataclass(frozen=True)
class Site:
    """The report being built: its folder, its templates and its copies of the images."""

    root: Path
    env: Environment
    store: ImageStore

    def write(self, rel: str, template: str, crumbs: list[tuple[str, str]], **ctx: Any) -> None:
        """Render ``template`` to the page ``rel``, with links relative to that page."""
        up = "../" * rel.count("/")
        crumbs = [(label, up + href) for label, href in crumbs]
        html = self.env.get_template(template).render(root=up, crumbs=crumbs, **ctx)
        # a lone surrogate (from a model reply or a dataset) becomes a character reference, never a crash
        atomic_write(self.root, self.root / rel, html.encode("utf-8", "xmlcharrefreplace"))


@dataclass(frozen=True)
class RunPlace:
    """Where one run's pages live inside the report."""

    run: RunData
    prefix: str  # "" for a single run, "runs/<slug>/" inside a multirun

    def item_page(self, item_id: str) -> str:
        return self.prefix + item_href(item_id)


def build_report(path: Path, out_dir: Path | None = None) -> Path:
    """Build the report of the run or multirun at ``path``; returns the path of ``index.html``."""
    path = Path(path)
    run_dirs = find_runs(path)
    root = Path(out_dir) if out_dir is not None else path / REPORT_DIR
    multi = run_dirs != [path]
    places = [
        RunPlace(load_run(d), f"runs/{safe_filename(str(d.relative_to(path)))}/" if multi else "")
        for d in run_dirs
    ]
    empty = [p.run.run_dir for p in places if not p.run.results]  # checked before touching the report dir
    places = [p for p in places if p.run.results]
    if not places:
        raise DataError(f"{empty[0]} has no finished items (empty or missing results.jsonl)")
    inside(root.parent, root)  # a report/ that is a link is refused: it would be replaced through it
    if root.exists() and not (root / MARKER).exists():
        raise UserError(
            f"{root} exists and is not a LedgerMind report; refusing to overwrite it (pass another --out)"
        )
    # Built beside the target and swapped in at the end: a crash leaves the old report (or none)
    # and a hidden temp dir, never a half-built report/ that blocks the next build.
    build = Path(tempfile.mkdtemp(prefix=f".{root.name}.building-", dir=root.parent))
    try:
        static = resources.files("ledgermind.report").joinpath("static")
        for name in ASSETS:
            atomic_write(build, build / "assets" / name, static.joinpath(name).read_bytes())
        env = environment(combined(label_for(p.run.identity) for p in places) or None)
        site = Site(build, env, ImageStore(build, [r for p in places for r in p.run.image_roots()]))
        # a single run's results hold each id once, so only a multirun shares ids
        shared = {i for i, n in Counter(r.id for p in places for r in p.run.results).items() if n > 1}
        views = {
            (k, i): v for k, place in enumerate(places) for i, v in _write_run(site, place, shared).items()
        }
        if multi:
            _write_multirun(site, path, places, views, shared, [str(d.relative_to(path)) for d in empty])
        atomic_write(
            build, build / MARKER, "generated by ledgermind.report; this directory is replaced on rebuild\n"
        )
        _swap_in(build, root)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return root / "index.html"


def _swap_in(build: Path, root: Path) -> None:
    """Replace ``root`` by the finished ``build`` (two renames; the old report is removed last)."""
    old = None
    if root.exists():
        old = root.with_name(f".{root.name}.old-{os.getpid()}")
        os.replace(root, old)
    os.replace(build, root)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_run(site: Site, place: RunPlace, shared: set[str]) -> dict[str, ItemView]:
    run = place.run
    crumbs = [("all runs", "index.html")] if place.prefix else []
    run_index = f"{place.prefix}index.html"
    views: dict[str, ItemView] = {}
    for r in run.results:
        rel = place.item_page(r.id)
        v = views[r.id] = _item_view(r, run.trajectories.get(r.id), run.items.get(r.id), site.store)
        compare = f"{'../' * rel.count('/')}compare/{safe_filename(r.id)}.html" if r.id in shared else None
        site.write(
            rel, "item.html.j2", [*crumbs, (f"run {run.variant}", run_index)], v=v, compare_href=compare
        )
    site.write(run_index, "run.html.j2", crumbs, v=build_run_view(run, views))
    return views


def _item_view(r: ItemResult, traj: dict[str, Any] | None, item: Item | None, store: ImageStore) -> ItemView:
    """The item's page; a trajectory of another shape (valid JSON, hand-edited or foreign) is shown as
    unreadable beside its result rather than stopping the whole report."""
    try:
        return build_item_view(r, traj, item, store)
    except (AttributeError, TypeError, ValueError, KeyError) as e:
        view = build_item_view(r, None, item, store)
        view.notes.append(f"trajectory unreadable ({type(e).__name__}: {e}); shown without it")
        return view


def _write_multirun(
    site: Site,
    path: Path,
    places: list[RunPlace],
    views: dict[tuple[int, str], ItemView],
    shared: set[str],
    empty: list[str],
) -> None:
    seeds = [p.run.identity.get("seed", 0) for p in places]
    runs = [
        {
            "variant": p.run.variant,
            "seed": seed,
            # several seeds: the side-by-side columns say which seed (from the identity, not the dir name)
            "label": f"{p.run.variant} (seed {seed})" if len(set(seeds)) > 1 else p.run.variant,
            "dir": str(p.run.run_dir.relative_to(path)),
            "href": f"{p.prefix}index.html",
            "n": len(p.run.results),
            # over the scored items, as the run's page and metrics.json: an error is no wrong answer
            "accuracy": headline([r for r in p.run.results if not r.error]).accuracy,
            "errors": sum(1 for r in p.run.results if r.error),
        }
        for p, seed in zip(places, seeds, strict=True)
    ]
    compares = []
    for item_id in dict.fromkeys(r.id for p in places for r in p.run.results if r.id in shared):
        rel = f"compare/{safe_filename(item_id)}.html"
        cols: list[dict[str, Any]] = [
            {"variant": p.run.variant, "href": "../" + p.item_page(item_id), "v": views[(k, item_id)]}
            for k, p in enumerate(places)
            if (k, item_id) in views
        ]
        site.write(rel, "compare.html.j2", [("all runs", "index.html")], columns=cols)
        outcomes = [getattr(views.get((k, item_id)), "outcome", None) for k in range(len(places))]
        compares.append({"id": item_id, "href": rel, "outcomes": outcomes})
    site.write(
        "index.html",
        "multirun.html.j2",
        [],
        runs=runs,
        compares=compares,
        table3=_table3(places),
        empty=empty,
        what=_what(places),
    )


def _what(places: list[RunPlace]) -> dict[str, str]:
    """Benchmark(s) and model(s) the multirun ran, for its title (each distinct value once)."""
    return {
        "benchmark": ", ".join(dict.fromkeys(str(p.run.identity.get("benchmark", "?")) for p in places)),
        "model": ", ".join(dict.fromkeys(backend_label(p.run.identity) for p in places)),
    }


def _table3(places: list[RunPlace]) -> dict[str, Any]:
    """Table 3 from the runs, or the reason it cannot be formed (unfinished, not comparable)."""
    from ledgermind.experiment import table3, table3_protocol, table3_render

    try:
        scores = [table3.load_run(p.run.run_dir) for p in places]
        rows = table3.build_rows(scores)
    except UserError as e:
        return {"error": str(e), "rows": [], "header": [], "caption": "", "note": "", "protocol": ""}
    ctx = table3.context_of(scores)
    return {
        "error": "",
        "header": table3_render.header(False, ctx),
        "rows": [table3_render.cells(r, False) for r in rows],
        "caption": table3.caption_for(scores),
        "note": table3_render.method_note(rows, ctx=ctx),
        "protocol": table3_protocol.escalation_line(scores),
    }
