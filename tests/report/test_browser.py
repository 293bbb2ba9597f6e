"""The report in a real browser (headless Chromium): loads clean, boxes sit on their bboxes,
citations jump to and highlight their entry, the item table filters and sorts, and hostile
model/tool/dataset text stays inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledgermind.runs.trajectories import safe_filename, trajectory_path
from tests.report.conftest import open_page, screenshot
from tests.report.scenario import MALICIOUS_OCR, MALICIOUS_REPLY

pytestmark = pytest.mark.slow

RECT_GEOMETRY_JS = """
const out = [];
for (const fig of document.querySelectorAll('.imgwrap')) {
  const img = fig.querySelector('img').getBoundingClientRect();
  const nw = Number(fig.querySelector('img').dataset.naturalWidth), nh = Number(fig.querySelector('img').dataset.naturalHeight);
  for (const r of fig.querySelectorAll('svg.boxes rect')) {
    const b = r.getBoundingClientRect();
    out.push({entry: r.dataset.entry, bbox: r.dataset.bbox.split(',').map(Number), img: [img.left, img.top, img.width, img.height],
              natural: [nw, nh], rect: [b.left, b.top, b.width, b.height],
              loaded: fig.querySelector('img').complete && fig.querySelector('img').naturalWidth});
  }
}
return out;
"""


def assert_boxes_on_bboxes(driver: Any, trajectory: dict[str, Any]) -> int:
    """Every drawn rect covers exactly its entry's bbox scaled to the image's rendered size."""
    rects = driver.execute_script(RECT_GEOMETRY_JS)
    bboxes = {e["id"]: e["bbox"] for e in trajectory["ledger"]["entries"] if e.get("bbox")}
    assert rects, "no evidence boxes were drawn"
    assert sorted(r["entry"] for r in rects) == sorted(bboxes)  # one box per entry with a bbox, no more
    for r in rects:
        assert r["loaded"], "image did not load"
        assert r["bbox"] == pytest.approx(bboxes[r["entry"]])  # the rect is the entry's own bbox
        left, top, width, height = r["img"]
        sx, sy = width / r["natural"][0], height / r["natural"][1]
        x0, y0, x1, y1 = r["bbox"]
        # stroke is drawn centred on the edge; allow it (≤ 2 px each side) on top of rounding
        assert r["rect"][0] == pytest.approx(left + x0 * sx, abs=2.5)
        assert r["rect"][1] == pytest.approx(top + y0 * sy, abs=2.5)
        assert r["rect"][2] == pytest.approx((x1 - x0) * sx, abs=5)
        assert r["rect"][3] == pytest.approx((y1 - y0) * sy, abs=5)
    return len(rects)


def trajectory(run_dir: Path, item_id: str) -> dict[str, Any]:
    return json.loads(trajectory_path(run_dir, item_id).read_text())


def item_page(multirun: Path, run: str, item_id: str) -> Path:
    return multirun / "report" / "runs" / safe_filename(run) / "items" / f"{safe_filename(item_id)}.html"


# ----------------------------------------------------------------------------- scripted scenario
def test_item_page_loads_clean_and_boxes_match_bboxes(browser, scripted_multirun: Path) -> None:
    page = item_page(scripted_multirun, "0_full", "apollo")
    assert open_page(browser, page) == []
    n = assert_boxes_on_bboxes(browser, trajectory(scripted_multirun / "0_full", "apollo"))
    assert n >= 3  # the three OCR lines (each recorded once per OCR call)
    # a smaller rendering (narrow screen, zoomed layout): the boxes must follow the image
    browser.execute_script(
        "document.querySelectorAll('.imgwrap img').forEach(i => i.style.maxWidth = '250px')"
    )
    assert (
        browser.execute_script("return document.querySelector('.imgwrap img').getBoundingClientRect().width")
        == 250
    )
    assert_boxes_on_bboxes(browser, trajectory(scripted_multirun / "0_full", "apollo"))


def test_clicking_a_citation_scrolls_to_and_highlights_its_entry(browser, scripted_multirun: Path) -> None:
    page = item_page(scripted_multirun, "0_full", "apollo")
    open_page(browser, page)
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    link = browser.find_element("css selector", "#claims a.cite[href^='#entry-']")
    target_id = link.get_attribute("href").split("#", 1)[1]
    browser.execute_script(
        "arguments[0].scrollIntoView({block: 'start'})", link
    )  # its entry (above) is now off screen
    before = browser.execute_script("return window.scrollY")
    assert browser.execute_script(
        "return document.getElementById(arguments[0]).getBoundingClientRect().bottom <= 0", target_id
    )
    link.click()
    state = browser.execute_script(
        "const el = document.getElementById(arguments[0]); const r = el.getBoundingClientRect();"
        "return {cls: el.className, top: r.top, bottom: r.bottom, vh: window.innerHeight, y: window.scrollY,"
        " boxes: [...document.querySelectorAll('svg.boxes rect.highlight')].map(x => x.dataset.entry),"
        " others: document.querySelectorAll('.highlight').length};",
        target_id,
    )
    assert "highlight" in state["cls"].split()
    assert 0 <= state["top"] and state["bottom"] <= state["vh"]  # scrolled into view
    assert state["y"] != before
    entry = target_id.removeprefix("entry-")
    assert set(state["boxes"]) <= {entry}  # its box (if it has one) is highlighted too, no other box
    assert browser.current_url.endswith("#" + target_id)


def test_clicking_a_box_jumps_to_its_ledger_row(browser, scripted_multirun: Path) -> None:
    open_page(browser, item_page(scripted_multirun, "0_full", "apollo"))
    rect = browser.find_elements("css selector", "svg.boxes rect")[-1]
    entry = rect.get_attribute("data-entry")
    browser.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))", rect
    )
    row = browser.find_element("id", f"entry-{entry}")
    assert "highlight" in row.get_attribute("class").split()
    assert browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight", row
    )


def test_run_table_filters_and_sorts(browser, scripted_multirun: Path) -> None:
    open_page(browser, scripted_multirun / "report" / "runs" / safe_filename("0_full") / "index.html")
    from selenium.webdriver.support.ui import Select

    def visible() -> list[str]:
        return browser.execute_script(
            "return [...document.querySelectorAll('#items tbody tr')].filter(r => !r.hidden).map(r => r.dataset.id)"
        )

    assert sorted(visible()) == ["apollo", "sign <x>"]
    Select(browser.find_element("id", "filter-path")).select_by_value("FULLPIPE")
    assert visible() == ["apollo"]
    assert browser.find_element("id", "shown-count").text == "1"
    Select(browser.find_element("id", "filter-path")).select_by_value("")
    Select(browser.find_element("id", "filter-trigger")).select_by_value("T1")
    results = {
        json.loads(x)["id"]: x
        for x in (scripted_multirun / "0_full" / "results.jsonl").read_text().splitlines()
    }
    with_t1 = sorted(
        i
        for i in results
        if any(e["trigger"].startswith("T1") for e in trajectory(scripted_multirun / "0_full", i)["events"])
    )
    assert sorted(visible()) == with_t1
    Select(browser.find_element("id", "filter-trigger")).select_by_value("")
    box = browser.find_element("id", "filter-text")
    box.send_keys("apol")
    assert visible() == ["apollo"]
    browser.execute_script(
        "const b = document.getElementById('filter-text'); b.value = ''; b.dispatchEvent(new Event('input'))"
    )
    assert len(visible()) == 2
    calls = {i: json.loads(x)["model_calls"] for i, x in results.items()}
    assert len(set(calls.values())) == 2  # the scenario makes the two items differ here
    header = browser.find_element("xpath", "//table[@id='items']//th[normalize-space()='model calls']")
    header.click()
    assert visible() == sorted(calls, key=calls.get)
    header.click()
    assert visible() == sorted(calls, key=calls.get, reverse=True)


def test_hostile_text_is_inert(browser, scripted_multirun: Path) -> None:
    run = scripted_multirun / "0_full"
    pages = [item_page(run.parent, "0_full", i) for i in ("sign <x>", "apollo")]
    pages += [
        run.parent / "report" / "runs" / safe_filename("0_full") / "index.html",
        run.parent / "report" / "compare" / f"{safe_filename('sign <x>')}.html",
        item_page(run.parent, "2_no_ledger", "apollo"),
    ]  # a free-form transcript
    for page in pages:
        assert open_page(browser, page) == [], page
        state = browser.execute_script(
            "return {pwned: document.body.getAttribute('data-pwned'), title: document.title,"
            " injected: document.querySelectorAll('#injected').length,"
            " scripts: [...document.scripts].map(s => s.getAttribute('src')),"
            " onerror: document.querySelectorAll('[onerror]').length, text: document.body.innerText};"
        )
        assert state["pwned"] is None and state["title"] != "pwned"
        assert state["injected"] == 0 and state["onerror"] == 0
        assert [s.endswith("assets/report.js") for s in state["scripts"]] == [True]  # only ours
    # the hostile texts are shown, as text
    open_page(browser, pages[0])
    text = browser.execute_script("return document.body.innerText")
    assert "<script>alert(1)</script>" in text  # a dataset option
    assert "<i>bold</i>" in text  # the question
    assert MALICIOUS_OCR in text  # an OCR line in the ledger table
    assert (
        "onerror=" in text and MALICIOUS_REPLY.split("Answer: ", 1)[1][:30] in text
    )  # the model's reply in the timeline


def test_multirun_index_and_side_by_side(browser, scripted_multirun: Path) -> None:
    report = scripted_multirun / "report"
    assert open_page(browser, report / "index.html") == []
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#table3 tbody tr')].map(r => r.cells[0].innerText)"
    )
    assert rows == ["LedgerMind (full)", "w/o Ledger", "w/o ECC/NCC"]  # the paper's row order
    assert open_page(browser, report / "compare" / f"{safe_filename('apollo')}.html") == []
    cols = browser.execute_script(
        "return [...document.querySelectorAll('.run-column')].map(c => c.dataset.variant)"
    )
    assert cols == ["full", "no_ecc", "no_ledger"]
    fired = browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.run-column')].map(c =>"
        " [c.dataset.variant, [...c.querySelectorAll('.counters [data-key]')].map(s => s.dataset.key)]))"
    )
    assert (
        "triggers.T6" in fired["full"] and "triggers.T6" not in fired["no_ecc"]
    )  # ECC off: no phantom check
    browser.find_element("css selector", ".run-column[data-variant='no_ecc'] h2 a").click()
    assert browser.current_url.endswith(
        f"runs/{safe_filename('1_no_ecc')}/items/{safe_filename('apollo')}.html"
    )
    assert browser.find_element("id", "path").text == "FULLPIPE"


# ----------------------------------------------------------------------------- a real tiny-model run
@pytest.mark.hf
def test_report_of_a_real_tiny_model_run(browser, tiny_run: Path) -> None:
    report = tiny_run / "report"
    assert open_page(browser, report / "index.html") == []
    ids = browser.execute_script(
        "return [...document.querySelectorAll('#items tbody tr')].map(r => r.dataset.id)"
    )
    results = [json.loads(x)["id"] for x in (tiny_run / "results.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(results)
    drawn = 0
    for item_id in results:
        assert open_page(browser, report / "items" / f"{safe_filename(item_id)}.html") == [], item_id
        t = trajectory(tiny_run, item_id)
        if any(e.get("bbox") for e in t["ledger"]["entries"]):
            drawn += assert_boxes_on_bboxes(browser, t)
    assert drawn > 0  # real PP-OCR lines on the sample images


def test_content_security_policy_blocks_markup_that_got_past_escaping(
    browser, scripted_multirun: Path
) -> None:
    """Defence in depth: even injected markup (as if escaping had failed) cannot run script."""
    page = item_page(scripted_multirun, "0_full", "apollo")
    probe = page.with_name("csp_probe.html")
    payload = (
        "<script>document.body.setAttribute('data-pwned','inline')</script>"
        "<img src=x onerror=\"document.body.setAttribute('data-pwned','onerror')\">"
    )
    probe.write_text(page.read_text().replace("</main>", payload + "</main>"))
    try:
        errors = open_page(browser, probe)
        assert browser.execute_script("return document.body.getAttribute('data-pwned')") is None
        assert any("Content Security Policy" in e["message"] for e in errors)  # blocked, and said so
        assert (
            browser.execute_script("return getComputedStyle(document.querySelector('header.top')).display")
            == "flex"
        )  # our CSS still applies
    finally:
        probe.unlink()


# ----------------------------------------------------------------------------- a report that opens on results
FIRST_SCREEN_JS = """
const vh = window.innerHeight, top = id => document.getElementById(id).getBoundingClientRect().top;
const banner = document.getElementById('test-instrument-banner');
const items = document.getElementById('items'), wrap = items.parentElement;
return {vh: vh, results: top('results'), accuracy: document.getElementById('accuracy').innerText,
        banner: banner ? [banner.getBoundingClientRect().top, getComputedStyle(banner).display, banner.innerText] : null,
        title: document.querySelector('h1').innerText,
        provenanceOpen: document.getElementById('provenance').open, provenance: top('provenance-section'),
        census: top('census'), itemTable: top('item-table'),
        tableRight: items.getBoundingClientRect().right, viewport: document.documentElement.clientWidth,
        wrapOverflow: wrap.scrollWidth - wrap.clientWidth,
        headers: Array.from(items.querySelectorAll('thead th')).map(th => th.innerText.replace(/[⇅\\s]+$/, '').trim()),
        thumbs: items.querySelectorAll('td.thumb img').length,
        thumbsLoaded: Array.from(items.querySelectorAll('td.thumb img')).every(i => i.complete && i.naturalWidth > 0)};
"""


def test_simulated_run_report_opens_on_results_under_a_test_instrument_banner(
    browser, simulated_run: Path
) -> None:
    browser.set_window_size(1400, 900)
    try:
        assert open_page(browser, simulated_run / "report" / "index.html") == []
        s = browser.execute_script(FIRST_SCREEN_JS)
        screenshot(browser, "report_run.png")
    finally:
        browser.set_window_size(1280, 900)
    metrics = json.loads((simulated_run / "metrics.json").read_text())
    assert s["banner"] is not None and s["banner"][0] < 120 and s["banner"][1] != "none"
    assert s["banner"][2].startswith("SIMULATED") and "test instrument" in s["banner"][2]
    assert (
        "SIMULATED backbone" in s["title"] and "tiny_qwen2_vl" not in s["title"]
    )  # the backend's label, not the model config
    assert s["results"] < s["vh"] / 2  # results on the first screen
    assert (
        f"{100 * metrics['accuracy']:.1f}%" in s["accuracy"] and "95% Wilson CI" in s["accuracy"]
    )  # the method named
    assert f"n = {metrics['n_scored']}" in s["accuracy"]
    assert not s["provenanceOpen"] and s["provenance"] > max(s["census"], s["itemTable"])  # collapsed, last
    assert {"question", "image", "subject", "difficulty"} <= set(s["headers"])
    assert s["thumbs"] == 4 and s["thumbsLoaded"]
    assert s["tableRight"] <= s["viewport"] and s["wrapOverflow"] <= 0  # every column visible at 1400 px


def test_structural_zeros_are_grey_and_never_fired_stays_red(browser, simulated_run: Path) -> None:
    open_page(browser, simulated_run / "report" / "index.html")
    chips = browser.execute_script("""
      const out = {};
      for (const c of document.querySelectorAll('#census .chip')) out[c.dataset.key] = [c.className, getComputedStyle(c).color,
          c.querySelector('.never-flag') !== null];
      return out;""")
    for key in (
        "paths.BASELINE",
        "paths.OFFICIAL",
        "paths.NO_LEDGER",
        "reflections",
    ):  # a full run cannot reach them
        cls, color, flagged = chips[key]
        assert "structural" in cls and not flagged and color == "rgb(140, 149, 159)", key
    never = [k for k, (cls, _, flagged) in chips.items() if flagged]
    assert all("structural" not in chips[k][0] for k in never)


def test_item_page_highlights_the_predicted_option_and_expands_each_prompt(
    browser, simulated_run: Path
) -> None:
    rows = [json.loads(line) for line in (simulated_run / "results.jsonl").read_text().splitlines()]
    row = rows[0]
    page = simulated_run / "report" / "items" / f"{safe_filename(row['id'])}.html"
    assert open_page(browser, page) == []
    options = browser.execute_script("""return Array.from(document.querySelectorAll('#options li')).map(li =>
        [li.querySelector('strong').innerText.replace('.', ''), li.className, getComputedStyle(li).outlineStyle]);""")
    pred = [o for o in options if "pred" in o[1]]
    assert [o[0] for o in pred] == [row["prediction"]] and pred[0][2] == "solid"
    assert [o[0] for o in options if "gold" in o[1]] == [row["gold"]]
    t = json.loads(trajectory_path(simulated_run, row["id"]).read_text())
    summaries = browser.find_elements("css selector", "details.call > summary")
    assert len(summaries) == len(t["model_calls"])
    first_text = next(
        p["text"]
        for p in t["model_calls"][0]["messages"][0]["content"]
        if p["type"] == "text" and p["text"].strip()
    )
    prompt = browser.find_elements("css selector", "details.call .prompt")[0]
    assert not prompt.is_displayed()
    summaries[0].click()
    assert prompt.is_displayed() and first_text.strip().splitlines()[0] in prompt.text


# ----------------------------------------------------------------------------- a report that says what and why
BANNER_JS = """const b = document.getElementById('test-instrument-banner');
return b ? [b.getBoundingClientRect().top, getComputedStyle(b).display, b.innerText, document.title,
            document.querySelector('h1') ? document.querySelector('h1').innerText : ''] : null;"""


def test_every_page_of_a_simulated_multirun_report_says_simulated(browser, simulated_multirun: Path) -> None:
    report = simulated_multirun / "report"
    pages = sorted(report.rglob("*.html"))
    kinds = {p.relative_to(report).parts[0] for p in pages}
    assert {"index.html", "runs", "compare"} <= kinds  # the index, each run's pages, the side-by-side pages
    for page in pages:
        assert open_page(browser, page) == [], page
        b = browser.execute_script(BANNER_JS)
        assert b is not None and b[0] < 120 and b[1] != "none", page
        assert b[2].startswith("SIMULATED") and b[3].startswith("SIMULATED — "), page
        if page.parent.name == "compare":  # side by side: counters by name, each decision with its status
            text, claims = browser.execute_script("""return [document.body.innerText,
                Array.from(document.querySelectorAll('.claim')).map(c => c.querySelector('.badge') ? c.dataset.status : null)]""")
            assert "by_place" not in text and all(claims), page
    open_page(browser, report / "index.html")
    h1 = browser.execute_script(BANNER_JS)[4]
    assert h1 == "Multirun: 2 runs — SIMULATED backbone (test instrument) on mmmu_pro/standard10"
    heads = browser.execute_script(
        "return Array.from(document.querySelectorAll('#table3 thead th')).map(t => t.innerText)"
    )
    assert [h for h in heads if h.startswith(("Easy", "Medium", "Hard", "Overall"))] and all(
        "(n=" in h for h in heads if h.startswith(("Easy", "Medium", "Hard", "Overall"))
    )  # n beside each split
    assert "95% sim. error" in heads and "p Holm" in heads


def test_why_panel_is_on_the_first_screen_and_equals_the_census(browser, simulated_run: Path) -> None:
    browser.set_window_size(1400, 900)
    try:
        open_page(browser, simulated_run / "report" / "index.html")
        top = browser.execute_script(
            "return [document.getElementById('why').getBoundingClientRect().top, window.innerHeight]"
        )
        cells = browser.execute_script("""const out = {};
          for (const td of document.querySelectorAll('#why td[data-key]')) out[td.dataset.key] = td.innerText.trim();
          return out;""")
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('#why a.example')).map(a => a.getAttribute('href'))"
        )
    finally:
        browser.set_window_size(1280, 900)
    assert top[0] < top[1]  # starts on the first screen
    census = json.loads((simulated_run / "metrics.json").read_text())["mechanisms"]["simulator"]
    assert cells, "the why panel shows the simulator's fault kinds"
    for key, shown in cells.items():
        section, outcome, kind = key.split(".")
        assert shown == str(census[outcome].get(kind, 0)), key  # the census's own number
    assert {k.split(".")[1] for k in cells} >= {"injected", "flagged", "neutralised", "reached"}
    for href in links:  # example links open the item's page
        assert (simulated_run / "report" / href).is_file()


RED = "rgb(207, 34, 46)"


def test_no_structural_or_good_zero_is_red(browser, simulated_run: Path) -> None:
    open_page(browser, simulated_run / "report" / "index.html")
    chips = browser.execute_script("""const out = [];
      for (const c of document.querySelectorAll('#census .chip')) out.push([c.dataset.key, c.dataset.value, c.dataset.meaning,
          getComputedStyle(c).color, getComputedStyle(c.querySelector('b')).color, c.querySelector('.never-flag') !== null]);
      return out;""")
    zeros = [c for c in chips if c[1] == "0"]
    calm = [c for c in zeros if c[2] in ("structural", "good-zero")]
    assert any(k.startswith("simulator.reached.") or k.startswith("simulator.faded.") for k, *_ in calm)
    for key, _, _meaning, colour, bold, flagged in calm:
        assert colour != RED and bold != RED and not flagged, key
    for key, _, meaning, colour, _, flagged in zeros:
        if meaning == "dead":
            assert colour == RED and flagged, key


def test_a_metric_header_explains_itself_on_hover_and_in_the_glossary(browser, simulated_run: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    open_page(browser, simulated_run / "report" / "index.html")
    abbr = browser.find_element("css selector", "#trajectory-metric-table abbr[data-metric='GDR']")
    ActionChains(browser).move_to_element(abbr).perform()
    title = browser.execute_script("return arguments[0].closest('th').title", abbr)
    assert title.startswith("GDR: Eq. 8") and title.endswith("(higher is better)")
    glossary = browser.execute_script("""const out = {};
      for (const dt of document.querySelectorAll('#glossary dt')) out[dt.textContent] = dt.nextElementSibling.textContent;
      return out;""")
    assert "WDG" in glossary, glossary
    assert glossary["WDG"].endswith("lower is better") and set(glossary) >= {
        "UCR_reason",
        "GDR",
        "R4R",
        "WDG",
    }


def test_n_beside_each_split(browser, simulated_run: Path) -> None:
    open_page(browser, simulated_run / "report" / "index.html")
    splits = browser.execute_script("""return Array.from(document.querySelectorAll('#accuracy-splits table')).map(t =>
        [t.dataset.split, t.querySelector('thead th:nth-child(2)').innerText,
         Array.from(t.querySelectorAll('tbody tr')).map(r => r.children[1].innerText)]);""")
    assert splits
    for name, head, ns in splits:
        assert head == "n" and ns and all(n.isdigit() and int(n) > 0 for n in ns), name
    labels = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart-accuracy text')).map(t => t.textContent)"
    )
    assert any("(n=" in t for t in labels)


# ----------------------------------------------------------------------------- numeric items, side by side
def test_a_numeric_item_page_shows_the_tolerance_that_scored_it(browser, gauges_multirun: Path) -> None:
    run = next(p for p in sorted(gauges_multirun.iterdir()) if p.name.endswith("full"))
    rows = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["prediction"] is not None and not r["error"])
    page = (
        gauges_multirun
        / "report"
        / "runs"
        / safe_filename(run.name)
        / "items"
        / f"{safe_filename(row['id'])}.html"
    )
    browser.set_window_size(1400, 900)
    try:
        assert open_page(browser, page) == []
        rule = browser.execute_script("return document.getElementById('scoring-rule').innerText")
        title = browser.title
        screenshot(browser, "report_item_numeric.png")
    finally:
        browser.set_window_size(1280, 900)
    pred, gold = float(row["prediction"]), float(row["gold"])
    assert rule.startswith("reading: within 15 % of the gold")
    assert f"= {abs(pred - gold):.4g}:" in rule
    assert rule.endswith("within the tolerance" if row["score"] >= 1.0 else "outside the tolerance")
    assert row["id"] in title and "LedgerMind audit" not in browser.page_source


SIDE_BY_SIDE_JS = """
const clipped = [];
for (const el of document.querySelectorAll('.run-column *')) {
  if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') clipped.push(el.tagName + ':' + el.innerText.slice(0, 40));
}
const cols = Array.from(document.querySelectorAll('.run-column')).map(c => c.getBoundingClientRect().right);
const img = document.getElementById('compare-image');
return {docWidth: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth,
        rightmost: Math.max(...cols), clipped: clipped, image: img !== null && img.complete && img.naturalWidth > 0};
"""


def test_the_side_by_side_page_is_legible_at_1400_px(browser, gauges_multirun: Path) -> None:
    pages = sorted((gauges_multirun / "report" / "compare").glob("*.html"))
    assert pages
    browser.set_window_size(1400, 900)
    try:
        assert open_page(browser, pages[0]) == []
        s = browser.execute_script(SIDE_BY_SIDE_JS)
        screenshot(browser, "report_side_by_side.png")
    finally:
        browser.set_window_size(1280, 900)
    assert s["docWidth"] <= s["viewport"] and s["rightmost"] <= s["viewport"]  # no sideways scrolling
    assert s["clipped"] == []  # nothing cut off inside a column
    assert s["image"]  # the item's image, so the columns can be read against it
