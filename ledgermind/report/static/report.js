// LedgerMind report: citation links, evidence highlighting, item-table filter and sort.
// No network, no dependencies; all page text is already escaped server-side, and this script
// only reads text (textContent / dataset), never writes HTML.
(function () {
  "use strict";

  function highlight(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    document.querySelectorAll(".highlight").forEach(function (x) { x.classList.remove("highlight"); });
    el.classList.add("highlight");
    var entry = el.getAttribute("data-entry");
    if (entry) {
      document.querySelectorAll("svg.boxes rect").forEach(function (r) {
        if (r.getAttribute("data-entry") === entry) r.classList.add("highlight");
      });
    }
    return el;
  }

  document.addEventListener("click", function (ev) {
    var a = ev.target.closest ? ev.target.closest("a.cite, a.ref") : null;
    if (!a) return;
    var href = a.getAttribute("href") || "";
    if (href.charAt(0) !== "#") return;
    var el = highlight(decodeURIComponent(href.slice(1)));
    if (!el) return;
    ev.preventDefault();
    el.scrollIntoView({ block: "center" });
    history.replaceState(null, "", href);
  });

  document.addEventListener("mouseover", function (ev) {
    var row = ev.target.closest ? ev.target.closest("tr[data-entry]") : null;
    document.querySelectorAll("svg.boxes rect.hover").forEach(function (r) { r.classList.remove("hover", "highlight"); });
    if (!row) return;
    document.querySelectorAll("svg.boxes rect").forEach(function (r) {
      if (r.getAttribute("data-entry") === row.getAttribute("data-entry") && !r.classList.contains("highlight")) {
        r.classList.add("hover", "highlight");
      }
    });
  });

  // ---------------------------------------------------------------- item table
  function applyFilters(table) {
    var get = function (id) { var el = document.getElementById(id); return el ? el : null; };
    var text = (get("filter-text") || {}).value || "";
    var outcome = (get("filter-outcome") || {}).value || "";
    var path = (get("filter-path") || {}).value || "";
    var trigger = (get("filter-trigger") || {}).value || "";
    var abst = get("filter-abstained"), phantom = get("filter-phantom");
    text = text.trim().toLowerCase();
    var shown = 0;
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      var d = tr.dataset;
      var ok = (!text || tr.textContent.toLowerCase().indexOf(text) >= 0) &&
        (!outcome || d.outcome === outcome) && (!path || d.path === path) &&
        (!trigger || (" " + d.triggers + " ").indexOf(" " + trigger + " ") >= 0) &&
        (!abst || !abst.checked || d.abstained === "true") &&
        (!phantom || !phantom.checked || Number(d.phantom) > 0);
      tr.hidden = !ok;
      if (ok) shown++;
    });
    var count = get("shown-count");
    if (count) count.textContent = String(shown);
  }

  function sortBy(table, th) {
    var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-sort") === "num";
    var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
    th.parentNode.querySelectorAll("th").forEach(function (x) { x.removeAttribute("data-dir"); });
    th.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[idx].getAttribute("data-value") || a.cells[idx].textContent;
      var y = b.cells[idx].getAttribute("data-value") || b.cells[idx].textContent;
      if (numeric) return dir * (Number(x) - Number(y));
      return dir * x.localeCompare(y);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (location.hash) highlight(decodeURIComponent(location.hash.slice(1)));
    var table = document.getElementById("items");
    if (!table) return;
    document.querySelectorAll(".filters input, .filters select").forEach(function (el) {
      el.addEventListener("input", function () { applyFilters(table); });
      el.addEventListener("change", function () { applyFilters(table); });
    });
    table.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () { sortBy(table, th); });
    });
    applyFilters(table);
  });
})();
