"""The Machines page's chart: inline SVG drawn on the server from peer-chosen host names."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memsync.commands.ui_chart import DAYS, commits_chart

_SVG = "{http://www.w3.org/2000/svg}"
_HOSTS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20)


@given(
    st.dictionaries(
        _HOSTS,
        st.dictionaries(
            st.integers(0, 40).map(lambda n: date(2026, 11, 1) + timedelta(days=n)), st.integers(1, 9)
        ),
        min_size=1,
        max_size=5,
    )
)
def test_the_chart_is_well_formed_svg_with_a_bar_per_host_and_day_in_its_span(
    series: dict[str, dict[date, int]],
) -> None:
    drawn = commits_chart(series)
    if not any(series.values()):
        assert drawn == ""
        return
    root = ET.fromstring(drawn)  # whatever the host names: well-formed XML
    end = max(day for counts in series.values() for day in counts)
    shown = {title.text for rect in root.iter(f"{_SVG}rect") for title in rect.iter(f"{_SVG}title")}
    wanted = {
        f"{host} {day}: {count}"
        for host, counts in series.items()
        for day, count in counts.items()
        if end - timedelta(days=DAYS - 1) <= day <= end
    }
    assert shown == wanted
    legend = {text.text for text in root.iter(f"{_SVG}text")}
    assert set(series) <= legend
