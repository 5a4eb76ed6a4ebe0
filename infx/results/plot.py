"""The Pareto picture: per config key and scenario, throughput per GPU against interactivity
(tokens/s per user), baseline and head on one chart.

Each chart is written twice: a PNG (matplotlib, headless; imported only here, only when
drawing) and a Mermaid `xychart-beta` block in charts.md, which GitHub renders in comments
and step summaries without hosting an image. Mermaid's xychart has no scatter series, no
gaps in a line and places a line's values evenly over a numeric x-axis, so the block draws
each frontier as the staircase it is (at each interactivity, the best throughput per GPU
reached at that interactivity or more), sampled at evenly spaced interactivities over the
range where every series has a value; a frontier reaching further is listed in words
beneath, never drawn as 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..fsio import atomic_write, replacing
from ..scenarios import scenario_label
from .compare import load_results
from .metrics import metric_value

X_METRIC, Y_METRIC = "intvty", "tput_per_gpu"
MERMAID_POINTS = 12  # interactivities each Mermaid line is sampled at
CHARTS_FILE = "charts.md"
SERIES = ("baseline", "head")


@dataclass
class Chart:
    config_key: str
    scenario: str
    series: dict[str, list[tuple[float, float]]]  # name -> (interactivity, throughput/GPU) points

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{self.config_key}_{self.scenario}").strip("-")

    @property
    def title(self) -> str:
        return f"{self.config_key} · {self.scenario}"


def pareto_frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes (higher is better on both), by x."""
    frontier, best = [], float("-inf")
    for x, y in sorted(set(points), key=lambda p: (-p[0], -p[1])):
        if y > best:
            frontier.append((x, y))
            best = y
    return sorted(frontier)


def charts_of(baseline: list[dict], head: list[dict]) -> list[Chart]:
    charts: dict[tuple, Chart] = {}
    for name, rows in (("baseline", baseline), ("head", head)):
        for row in rows:
            x, y = metric_value(row, X_METRIC), metric_value(row, Y_METRIC)
            if x is None or y is None:
                continue
            key = (str(row.get("config-key")), scenario_label(row))
            chart = charts.setdefault(key, Chart(key[0], key[1], {s: [] for s in SERIES}))
            chart.series[name].append((x, y))
    return [charts[key] for key in sorted(charts)]


def staircase(frontier: list[tuple[float, float]], xs: list[float]) -> list[float | None]:
    """Best y reached at interactivity >= x, for each x; None where the frontier does not reach."""
    return [max((y for fx, y in frontier if fx >= x - 1e-9), default=None) for x in xs]


# The series' colours, the same in the PNG (matplotlib's names) and in the Mermaid block (hex), and
# the words the legend line above a Mermaid chart names them by.
SERIES_COLORS = {"baseline": ("tab:gray", "#7f7f7f", "grey"), "head": ("tab:blue", "#1f77b4", "blue")}


def mermaid(chart: Chart) -> str:
    frontiers = {name: pareto_frontier(chart.series[name]) for name in SERIES if chart.series.get(name)}
    names = list(frontiers)
    low = min(x for frontier in frontiers.values() for x, _ in frontier)
    reach = {name: frontier[-1][0] for name, frontier in frontiers.items()}
    high = min(reach.values())  # every series has a value up to here, none is drawn beyond it
    if high <= low:  # one interactivity: the staircase holds its value to the left of it, drawn as a visible line
        low = high * 0.8
    xs = [low + (high - low) * i / (MERMAID_POINTS - 1) for i in range(MERMAID_POINTS)]
    lines_of = {name: staircase(frontiers[name], xs) for name in names}
    top = max(y for frontier in frontiers.values() for _, y in frontier)
    legend = " · ".join(f"**{name}** ({SERIES_COLORS[name][2]} line)" for name in names)
    beyond = [
        f"{name}'s frontier continues beyond {_number(high)} tok/s/user: "
        + ", ".join(f"{_number(y)} tok/s/GPU at {_number(x)}" for x, y in frontiers[name] if x > high + 1e-9)
        for name in names
        if reach[name] > high + 1e-9
    ]
    palette = ", ".join(SERIES_COLORS[name][1] for name in names)
    x_axis = f"{_number(low)} --> {_number(high)}"
    lines = [
        f"**{_quote(chart.title)}**: Pareto frontier, throughput per GPU against interactivity. Legend: {legend}.",
        *(["", *(f"- {_quote(text)}." for text in beyond)] if beyond else []),
        "",
        "```mermaid",
        '%%{init: {"xyChart": {"showLegend": true}, "themeVariables": {"xyChart": {"plotColorPalette": "'
        + palette
        + '"}}}}%%',
        "xychart-beta",
        f'    title "{_quote(chart.title)}"',
        f'    x-axis "interactivity (tok/s/user)" {x_axis}',
        f'    y-axis "throughput per GPU (tok/s)" 0 --> {_nice(top * 1.1)}',
    ]
    # every sampled x lies within each series' reach, so no value is None here
    lines += [f'    line "{name}" [{", ".join(_datum(y) for y in lines_of[name] if y is not None)}]' for name in names]
    lines.append("```")
    return "\n".join(lines)


def _quote(text: str) -> str:
    """Config keys and scenarios inside a Mermaid string: nothing that could end the string or the block."""
    return re.sub(r"[^A-Za-z0-9 ._/:+·,'-]", "_", text)


def _number(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def _datum(y: float) -> str:
    """A value as Mermaid reads it (plain decimals, no exponent), small ones with the digits that keep them off 0."""
    return f"{y:.1f}" if y >= 10 else f"{y:.4f}".rstrip("0").rstrip(".")


def _nice(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.3g}"


class PngWriter:
    """One matplotlib figure, redrawn per chart. Building a figure, its ticks and a layout
    (tight_layout) cost more than drawing, so the margins are fixed and only the data
    artists are replaced from one chart to the next."""

    SIZE, DPI = (7, 4.5), 100  # inches, dots per inch: 700 x 450 pixels

    def __init__(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # no pyplot: headless, and faster to import
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.figure = Figure(figsize=self.SIZE, dpi=self.DPI)
        FigureCanvasAgg(self.figure)
        self.figure.subplots_adjust(left=0.11, right=0.97, top=0.92, bottom=0.12)
        self.axes = axes = self.figure.add_subplot()
        axes.set_xlabel("interactivity (tok/s/user)")
        axes.set_ylabel("throughput per GPU (tok/s)")
        axes.xaxis.set_major_locator(MaxNLocator(6))
        axes.yaxis.set_major_locator(MaxNLocator(6))
        axes.grid(True, alpha=0.3)
        self.title = axes.set_title("", fontsize=10)

    def draw(self, chart: Chart, path: Path) -> None:
        axes = self.axes
        for artist in [*axes.lines, *axes.collections]:
            artist.remove()
        legend = axes.get_legend()
        if legend is not None:
            legend.remove()
        for name in SERIES:
            points = chart.series.get(name) or []
            if not points:
                continue
            color = SERIES_COLORS[name][0]
            axes.scatter([x for x, _ in points], [y for _, y in points], color=color, alpha=0.4, s=18)
            frontier = pareto_frontier(points)
            axes.plot(
                [x for x, _ in frontier],
                [y for _, y in frontier],
                marker="o",
                color=color,
                drawstyle="steps-pre" if len(frontier) > 1 else "default",
                label=f"{name} frontier",
            )
        axes.relim()
        axes.autoscale_view()
        self.title.set_text(chart.title)
        axes.legend(loc="upper right")
        with replacing(path) as temporary:
            self.figure.savefig(temporary, format="png", pil_kwargs={"compress_level": 1})


def plot(baseline: list[dict], head: list[dict], output: Path) -> list[Chart]:
    """`<output>/<config-key>_<scenario>.png` per chart and `<output>/charts.md`."""
    output.mkdir(parents=True, exist_ok=True)
    charts = charts_of(baseline, head)
    if charts:
        writer = PngWriter()
        for chart in charts:
            writer.draw(chart, output / f"{chart.slug}.png")
    blocks = [mermaid(chart) for chart in charts]
    atomic_write(
        output / CHARTS_FILE, "\n\n".join(blocks) + "\n" if blocks else "_No rows with throughput and interactivity._\n"
    )
    return charts


@dataclass(frozen=True)
class PlotRequest:
    """`infx results plot`: the sweep's results, the baseline's (drawn on the same charts) and the output folder."""

    results: tuple[Path, ...]
    output: Path
    baseline: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Plotted:
    charts: list[Chart]
    notices: tuple[str, ...]  # a row of the inputs left out, and why


def plot_results(request: PlotRequest) -> Plotted:
    """Read the results files (or artifact folders) and draw their charts into the output folder."""
    head = load_results(list(request.results))
    base = load_results(list(request.baseline)) if request.baseline else None
    charts = plot(base.results.rows if base else [], head.results.rows, request.output)
    return Plotted(charts, head.notices + (base.notices if base else ()))


def read_chart_blocks(path: Path) -> list[str]:
    """The blocks of a charts.md, for the comment and the summary (which cut them one by one)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [block.strip() for block in re.split(r"\n(?=\*\*)", text) if "```mermaid" in block]
