"""A store as the daemon serves it changes its flags only through its own transitions: a requested sync
and added tracks make the next cycle a full pass, a failed cycle backs off until one succeeds."""

from __future__ import annotations

from pathlib import Path

from memsync.config.file import Config, StoreConfig
from memsync.daemon.backoff import Remotes
from memsync.daemon.debounce import Debouncer
from memsync.daemon.served import ServedStore
from memsync.store.locks import StoreGuard


def _served(tmp_path: Path) -> ServedStore:
    return ServedStore(
        Debouncer(1.0, 10.0), StoreGuard("p", tmp_path / "store", tmp_path / "c"), Remotes("p")
    )


def test_a_requested_sync_is_one_full_pass_and_the_next_cycle_visits_what_changed(tmp_path: Path) -> None:
    served = _served(tmp_path)
    first, reconcile = served.begin_cycle(5.0, all_remotes=True)
    assert (first, reconcile, served.busy, served.last_cycle) == (None, True, True, 5.0)  # start-up: doubt
    served.cycle_ended(6.0)
    assert not served.succeeded() and not served.busy

    served.note_change(tmp_path / "a.md", doubt=False)
    served.request()
    assert served.begin_cycle(7.0, all_remotes=True) == (None, False)  # asked for: a full pass
    served.cycle_ended(8.0)
    served.note_change(tmp_path / "b.md", doubt=False)
    assert served.begin_cycle(9.0, all_remotes=True) == (frozenset({tmp_path / "b.md"}), False)


def test_failures_back_off_until_a_cycle_succeeds_and_added_tracks_reconcile(tmp_path: Path) -> None:
    served = _served(tmp_path)
    again, first_wait = served.failed(10.0, cap=60.0)
    assert not again and served.failing and served.deadlines() == [10.0 + first_wait]
    again, second_wait = served.failed(20.0, cap=60.0)
    assert again and second_wait > first_wait
    assert served.succeeded() and not served.failing and served.backoff.retry_at is None

    served.reconcile(tracks_added=True)
    assert served.tracks_added and not served.reconciled
    assert served.begin_cycle(30.0, all_remotes=False) == (None, True)
    assert not served.tracks_added


def test_a_reload_retunes_the_debounce_and_follows_the_remotes(tmp_path: Path) -> None:
    served = _served(tmp_path)
    config = Config(path=tmp_path / "c", host="h", debounce_s=3.0, max_delay_s=2.0)
    store = StoreConfig("p", tmp_path / "store", remotes={"origin": "/srv/p.git"})
    served.follow(config, store, spread=0.25)
    assert (served.debouncer.debounce_s, served.debouncer.max_delay_s, served.spread) == (3.0, 3.0, 0.25)
    assert list(served.remotes.health) == ["origin"]
