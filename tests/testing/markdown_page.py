"""A comment's Markdown as GitHub shows it, on a local page: GitHub-flavoured Markdown by `marked` and every
```mermaid block drawn by `mermaid`, both loaded from this repository's node_modules (package.json pins them;
`npm ci` installs them), nothing from the network. The page exposes `window.rendered`, a promise that settles
when every chart is drawn (or rejects with Mermaid's parse error), for tests/testing/browser.py to await.
"""

from __future__ import annotations

import json
from pathlib import Path

NODE_MODULES = Path(__file__).resolve().parents[2] / "node_modules"
SCRIPTS = (NODE_MODULES / "marked" / "lib" / "marked.umd.js", NODE_MODULES / "mermaid" / "dist" / "mermaid.min.js")

RENDER = """
window.rendered = (async () => {
  const markdown = JSON.parse(document.getElementById("markdown").textContent);
  document.getElementById("comment").innerHTML = marked.parse(markdown, { gfm: true });
  for (const code of document.querySelectorAll("code.language-mermaid")) {
    const chart = document.createElement("div");
    chart.className = "mermaid";
    chart.textContent = code.textContent;
    code.parentElement.replaceWith(chart);
  }
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  await mermaid.run({ querySelector: "div.mermaid" });
  return document.querySelectorAll("div.mermaid svg").length;
})();
"""

STYLE = """
body { font-family: sans-serif; font-size: 14px; max-width: 1100px; margin: 16px; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: 4px 8px; }
div.mermaid { max-width: 760px; }
"""


def write_page(markdown: str, path: Path) -> Path:
    """``path``: an HTML page rendering ``markdown``; the scripts come from node_modules by file:// URL."""
    missing = [str(script) for script in SCRIPTS if not script.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing: run `npm ci` in the repository root")
    data = json.dumps(markdown).replace("</", "<\\/")  # nothing in the comment can end the script element
    scripts = "\n".join(f'<script src="{script.as_uri()}"></script>' for script in SCRIPTS)
    path.write_text(
        "<!doctype html>\n<html><head><meta charset='utf-8'>\n"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src file: 'unsafe-inline' "
        "'unsafe-eval'; style-src 'unsafe-inline'; img-src file: data:; font-src file: data:\">\n"
        f"<style>{STYLE}</style>\n{scripts}\n</head><body>\n<div id='comment'></div>\n"
        f"<script type='application/json' id='markdown'>{data}</script>\n<script>{RENDER}</script>\n</body></html>\n",
        encoding="utf-8",
    )
    return path
