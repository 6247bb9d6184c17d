"""The Machines page's chart: commits per day per host as inline SVG, drawn on the server (no script, no
library, nothing fetched). It scales to the page's width through its ``viewBox``."""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import date, timedelta

DAYS = 14  # the chart's span, ending on the last day any host committed
_COLOURS = ("#3465a4", "#cc0000", "#4e9a06", "#c4a000", "#75507b", "#ce5c00", "#06989a", "#555753")
_WIDTH, _HEIGHT, _LEFT, _BOTTOM, _TOP = 560, 180, 28, 22, 8


def commits_chart(series: Mapping[str, Mapping[date, int]]) -> str:
    """An ``<svg>`` of grouped bars: for each of the :data:`DAYS` days ending on the latest day in
    ``series`` (host -> local day -> commits), a bar per host, each with a ``<title>`` naming host, day and
    count, and a legend. Host names are escaped (a peer chose them). An empty string for no commits."""
    hosts = sorted(series)
    seen = [day for counts in series.values() for day, n in counts.items() if n]
    if not seen:
        return ""
    end = max(seen)
    days = [end - timedelta(days=back) for back in range(DAYS - 1, -1, -1)]
    top = max(max((series[host].get(day, 0) for host in hosts for day in days), default=1), 1)
    plot_w, plot_h = _WIDTH - _LEFT, _HEIGHT - _BOTTOM - _TOP
    slot = plot_w / DAYS
    bar = max(slot * 0.8 / len(hosts), 1.0)
    legend_h = 16 * len(hosts)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {_WIDTH} {_HEIGHT + legend_h}" '
        'role="img" '
        f'aria-label="commits per day per host">',
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_WIDTH}" y2="{_TOP + plot_h}" stroke="#888"/>',
        f'<text x="{_LEFT - 4}" y="{_TOP + 8}" font-size="10" text-anchor="end">{top}</text>',
        f'<text x="{_LEFT - 4}" y="{_TOP + plot_h}" font-size="10" text-anchor="end">0</text>',
    ]
    for i, day in enumerate(days):
        x0 = _LEFT + i * slot + slot * 0.1
        for j, host in enumerate(hosts):
            count = series[host].get(day, 0)
            if not count:
                continue
            h = plot_h * count / top
            name = html.escape(host)
            parts.append(
                f'<rect x="{x0 + j * bar:.1f}" y="{_TOP + plot_h - h:.1f}" width="{bar:.1f}" '
                f'height="{h:.1f}" '
                f'fill="{_COLOURS[j % len(_COLOURS)]}"><title>{name} {day}: {count}</title></rect>'
            )
        if i % 2 == (DAYS - 1) % 2:  # every other day, the last one labelled
            parts.append(
                f'<text x="{_LEFT + (i + 0.5) * slot:.1f}" y="{_HEIGHT - 6}" font-size="10" '
                f'text-anchor="middle">{day:%m-%d}</text>'
            )
    for j, host in enumerate(hosts):
        y = _HEIGHT + 4 + 16 * j
        parts.append(
            f'<rect x="{_LEFT}" y="{y}" width="10" height="10" fill="{_COLOURS[j % len(_COLOURS)]}"/>'
            f'<text x="{_LEFT + 14}" y="{y + 9}" font-size="11">{html.escape(host)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
