"""Property: whatever the interleaving of appends, publishes and deliveries on two machines, every
complete line written (repeats and blank lines included) ends up in the store and in both live files
exactly as often as it was written (DESIGN I1, I2)."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.config.file import Track
from memsync.sync.passes import deliver, publish
from memsync.sync.state import SyncState

DAILY = "daily/2026-11-30.md"
LINES = st.sampled_from([b"\n", b"- same\n", b"- [09:00] ran it\n", b"```\n", b"text \xc3\xa9\n"])
# (what, machine, lines to append, unfinished tail to append after them)
STEP = st.tuples(
    st.sampled_from(["append", "publish", "deliver"]),
    st.integers(0, 1),
    st.lists(LINES, min_size=1, max_size=3),
    st.sampled_from([b"", b"", b"half"]),
)


def _lines(path: Path) -> Counter[bytes]:
    return Counter(path.read_bytes().splitlines(keepends=True) if path.exists() else [])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=14))
def test_every_line_arrives_as_often_as_written(steps: list[tuple[str, int, list[bytes], bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "store"
        store.mkdir()
        machines: list[tuple[Track, SyncState]] = []
        for name in ("a", "b"):
            live = root / name / "qa"
            (live / "daily").mkdir(parents=True)
            (live / "MEMORY.md").write_bytes(b"# Memory\n")
            machines.append((Track(live, "roles/qa"), SyncState(root / name / "meta")))
        written: Counter[bytes] = Counter()
        unfinished = [b"", b""]
        try:
            for track, state in machines:
                publish(track, store, state, 0.0)
                deliver(track, store, state)
            for what, index, lines, tail in steps:
                track, state = machines[index]
                if what == "append":
                    data = b"".join(lines) + tail
                    with (track.live / DAILY).open("ab") as handle:
                        handle.write(data)
                    text = unfinished[index] + data
                    complete = text[: text.rfind(b"\n") + 1]
                    written.update(complete.splitlines(keepends=True))
                    unfinished[index] = text[len(complete) :]
                elif what == "publish":
                    publish(track, store, state, 0.0)
                else:
                    deliver(track, store, state)
            # The agents finish their lines; three quiet rounds settle everything.
            for index, (track, _) in enumerate(machines):
                if unfinished[index]:
                    with (track.live / DAILY).open("ab") as handle:
                        handle.write(b"\n")
                    written[unfinished[index] + b"\n"] += 1
            for _ in range(3):
                for track, state in machines:
                    publish(track, store, state, 0.0)
                    deliver(track, store, state)
            assert _lines(store / "roles/qa" / DAILY) == written
            for track, _ in machines:
                assert _lines(track.live / DAILY) == written
        finally:
            for _, state in machines:
                state.close()
