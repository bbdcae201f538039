"""The README's table and part 14's goal counts from a saved ``bench/gui_latency.py`` run.

Run from the repository root::

    python bench/gui_latency.py --steps 30 > gui_latency.json
    python bench/latency_table.py gui_latency.json

Prints the Markdown table the README quotes (one row per timed slider; a slider the run skipped
gets no row), then the counts the README's text gives: sliders whose recompute + setData p95 is
at most 16 ms (and which are not), sliders whose median is at most the bare baseline's, the same
without the recompute, and the plots' own paint over the bare widgets' (median ratio, over the
rows that painted, and over those whose range stays put). Reads JSON only; imports no Qt.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

#: Part 14's goal for recompute + setData at the 95th percentile, in milliseconds.
GOAL_P95_MS = 16.0

HEADER = ("| view | slider | median ms | p95 ms | recompute + setData median / p95 ms | plots' own paint, median ms "
          "| plots painted / shown | bare pyqtgraph for those: median / p95 ms (its paint) |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")


def _ms(x: float) -> str:
    return f"{x:.1f}"


def _count(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def timed_rows(doc: dict) -> list[dict]:
    """The run's rows that were timed (not skipped)."""
    return [r for r in doc["results"] if "skipped" not in r]


def row_names(rows: list[dict]) -> list[str]:
    """Each row's first column: the view, its settings (thousands separated) and, where it changes, the tab."""
    names, last_tab = [], {}
    for r in rows:
        config = r.get("config") or {}
        name = r["view"] + (" (" + ", ".join(f"{k} = {v:,}" for k, v in config.items()) + ")" if config else "")
        key = (r["view"], json.dumps(config, sort_keys=True))
        tab = r.get("tab")
        if tab and last_tab.get(key) != tab:
            name += f", {tab} tab"
        last_tab[key] = tab
        names.append(name)
    return names


def table(doc: dict) -> str:
    rows = timed_rows(doc)
    lines = [HEADER]
    for name, r in zip(row_names(rows), rows):
        lines.append(
            f"| {name} | {r['slider']} | {_ms(r['median_ms'])} | {_ms(r['p95_ms'])} "
            f"| {_ms(r['to_redraw_median_ms'])} / {_ms(r['to_redraw_p95_ms'])} | {_ms(r['plots_paint_median_ms'])} "
            f"| {_count(r['plots_painted'])} / {r['plots']} "
            f"| {_ms(r['baseline_median_ms'])} / {_ms(r['baseline_p95_ms'])} ({_ms(r['baseline_paint_median_ms'])}) |")
    return "\n".join(lines)


def goals(doc: dict) -> dict:
    """The counts behind part 14's goals, over the timed rows."""
    rows = timed_rows(doc)
    misses = [{"view": name, "slider": r["slider"], "median_ms": r["to_redraw_median_ms"],
               "p95_ms": r["to_redraw_p95_ms"]}
              for name, r in zip(row_names(rows), rows) if r["to_redraw_p95_ms"] > GOAL_P95_MS]
    painting = [r for r in rows if r["baseline_paint_median_ms"] > 0]
    ratios = [r["plots_paint_median_ms"] / r["baseline_paint_median_ms"] for r in painting]
    still = [r["plots_paint_median_ms"] / r["baseline_paint_median_ms"] for r in painting
             if not r["baseline_ranges_move"]]
    return {
        "rows": len(rows),
        "p95_at_most_16_ms": len(rows) - len(misses),
        "misses": misses,
        "median_at_most_bare": sum(r["median_ms"] <= r["baseline_median_ms"] for r in rows),
        "median_less_recompute_at_most_bare": sum(
            r["median_ms"] - r["to_redraw_median_ms"] <= r["baseline_median_ms"] for r in rows),
        "ranges_move": sum(bool(r["baseline_ranges_move"]) for r in rows),
        "paint_ratio_median": round(statistics.median(ratios), 2) if ratios else None,
        "paint_ratio_rows": len(ratios),
        "paint_ratio_median_fixed_range": round(statistics.median(still), 2) if still else None,
        "total_s": doc.get("total_s"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a JSON document printed by bench/gui_latency.py ('-': standard input)")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.run == "-" else Path(args.run).read_text(encoding="utf-8")
        doc = json.loads(text)
        print(table(doc))
        print()
        print(json.dumps(goals(doc), indent=2, ensure_ascii=False))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"latency_table: cannot read {args.run!r} as a gui_latency run: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
