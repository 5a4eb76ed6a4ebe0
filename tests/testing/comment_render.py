"""A PR comment as a reviewer sees it: its Markdown rendered on a local page (tests/testing/markdown_page.py)
in headless Chromium (tests/testing/browser.py), a screenshot kept, and what a reviewer reads gathered from
the page: per Mermaid chart its axes' tick labels and its legend, every table cell, every table row's text,
and every console error and request that left file://.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testing.browser import Browser
from testing.markdown_page import write_page

FACTS = """
(() => {
  const texts = (root, selector) => Array.from(root.querySelectorAll(selector)).map(t => t.textContent.trim());
  return {
    charts: Array.from(document.querySelectorAll("div.mermaid")).map(chart => {
      const svg = chart.querySelector("svg");
      return svg === null ? null : {
        x_ticks: texts(svg, "g.bottom-axis g.label text"),
        y_ticks: texts(svg, "g.left-axis g.label text"),
        legend: texts(svg, "g.legend g.label text"),
        lines: svg.querySelectorAll("g.plot path").length,
        syntax_error: svg.querySelector(".error-text") !== null,
      };
    }),
    cells: texts(document, "td"),
    rows: texts(document, "tr"),
    text: document.body.innerText,
  };
})()
"""


@dataclass(frozen=True)
class Rendered:
    charts: list[dict | None]  # None: a chart Mermaid drew no SVG for
    cells: list[str]
    rows: list[str]
    text: str
    errors: list[str]
    outside_requests: list[str]  # requests for anything but a local file
    screenshot: Path


def render_comment(body: str, folder: Path) -> Rendered:
    """Render ``body`` into ``folder`` (comment.md, comment.html, comment.png) and read the page back."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "comment.md").write_text(body, encoding="utf-8")
    page_path = write_page(body, folder / "comment.html")
    with Browser() as browser:
        page = browser.open(page_path.as_uri(), ready="window.rendered")
        facts = page.evaluate(FACTS)
        page.screenshot(folder / "comment.png")
        errors, requests = list(page.errors), list(page.requests)
    return Rendered(
        charts=facts["charts"],
        cells=facts["cells"],
        rows=facts["rows"],
        text=facts["text"],
        errors=errors,
        outside_requests=[url for url in requests if not url.startswith("file://")],
        screenshot=folder / "comment.png",
    )


def is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").replace("\u2212", "-"))
    except ValueError:
        return False
    return True


def assert_readable(rendered: Rendered, point_ids: list[str]) -> None:
    """What the issue asks of the comment: every chart drawn, with numeric axes and a legend; no missing value
    shown as 0.0; each point in exactly one table row; nothing broken on the page, nothing fetched."""
    assert rendered.charts, rendered.text
    for chart in rendered.charts:
        assert chart is not None and not chart["syntax_error"], rendered.charts
        assert len(chart["x_ticks"]) >= 2 and all(map(is_number, chart["x_ticks"])), chart
        assert len(chart["y_ticks"]) >= 2 and all(map(is_number, chart["y_ticks"])), chart
        assert chart["legend"] and set(chart["legend"]) <= {"baseline", "head"}, chart
        assert chart["lines"] == len(chart["legend"]), chart
    invented = [cell for cell in rendered.cells if cell == "0.0" or cell.startswith("0.0 (")]
    assert not invented, invented
    for pid in point_ids:
        rows = [row for row in rendered.rows if pid in row]
        assert len(rows) == 1, (pid, rows)
    assert not rendered.errors, rendered.errors
    assert not rendered.outside_requests, rendered.outside_requests
    assert rendered.screenshot.stat().st_size > 10_000
