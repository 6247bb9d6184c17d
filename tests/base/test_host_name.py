"""A host name goes into every commit's ``Memsync-Host`` trailer: whatever it holds, the trailer is one line
of printable text, and the config's check refuses exactly the names it would have to change."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memsync.base.layout import HOST_MAX, host_problem, trailer_host


@given(st.text())
def test_a_trailer_value_is_one_printable_line_and_an_accepted_name_is_kept(host: str) -> None:
    value = trailer_host(host)
    assert value.isprintable() and len(value) <= HOST_MAX
    assert (value == host) == (host_problem(host) is None)
