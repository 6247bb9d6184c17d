"""An object that owns one SQLite connection for its lifetime (the sync state, the recall index), and how
it closes: once, leaving the query planner's statistics current."""

from __future__ import annotations

import sqlite3
from types import TracebackType
from typing import Self

# Rows ``PRAGMA optimize`` may sample per index (``analysis_limit``): enough for the planner, and a close
# stays quick whatever the database's size (SQLite's recommendation).
ANALYSIS_LIMIT = 400


class Database:
    """Owner of the SQLite connection ``_db``; ``close`` or ``with`` ends it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def optimize(self) -> None:
        """Run ``PRAGMA optimize`` (SQLite's advice before closing a connection that ran queries, and now
        and then on one that stays open: it analyzes the tables those queries would plan better with).
        Never waits for another writer and never raises: the statistics are advice."""
        try:
            waits = self._db.execute("PRAGMA busy_timeout").fetchone()[0]
            self._db.execute("PRAGMA busy_timeout = 0")  # a busy database is optimized another time
            try:
                self._db.execute(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
                self._db.execute("PRAGMA optimize")
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {int(waits)}")
        except sqlite3.Error:
            pass  # busy, read-only or in a failed transaction

    def close(self) -> None:
        """``optimize``, then close the connection. A second close does nothing; any later use raises
        ``sqlite3.ProgrammingError``."""
        if self._closed:
            return
        self._closed = True
        try:
            self.optimize()
        finally:
            self._db.close()
