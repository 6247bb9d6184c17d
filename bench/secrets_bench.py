"""Benchmark of the secret scanner on real memory (``../shared/corpus``): what publish pays per line to
scan what a reader will see (memory-file lines as their decoded JSON strings, daily-log lines, whole
files with their frontmatter values, each path's names), against the old raw scan of the same text
(the detectors alone on the bytes as written), measured in the same run. Also the corpus findings of
each: the new scan's must be justified one by one (see docs/reliability.md).

Then a first sync's whole files in bulk: ``scan_whole`` file by file against ``scan_wholes`` of all at
once (the corpus's markdown files, and ``--small`` new one-line notes with their paths' names), with
the verdicts compared.

Run: ``.venv/bin/python bench/secrets_bench.py [--corpus PATH] [--repeat 5] [--small 10000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memsync.base.layout import is_append_only
from memsync.secrets.detectors import detect
from memsync.secrets.files import name_detectors, scan_appended, scan_name, scan_whole, scan_wholes
from memsync.sync.writes import BATCH_FILES

DEFAULT_CORPUS = Path(
    os.environ.get("MEMSYNC_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus")
)


def _files(corpus: Path) -> list[tuple[str, bytes]]:
    """(store path, bytes) of every corpus file, as publish would see it under a role's store path."""
    return [
        ("roles/corpus/" + path.relative_to(corpus).as_posix(), path.read_bytes())
        for path in sorted(p for p in corpus.rglob("*") if p.is_file())
    ]


def _old(files: list[tuple[str, bytes]]) -> list[tuple[str, int, str]]:
    found = []
    for rel, data in files:
        found += [(rel, f.line, f.detector) for f in detect(data.decode("utf-8", errors="replace"))]
    return found


def _new(files: list[tuple[str, bytes]]) -> list[tuple[str, int, str]]:
    found: list[tuple[str, int, str]] = []
    name_detectors.cache_clear()  # publish caches names per process; the first cycle pays for each
    for rel, data in files:
        named = scan_name(rel)
        if named is not None:
            found.append((rel, 0, named))
        elif is_append_only(rel):
            lines = data.splitlines(keepends=True)
            found += [(rel, i + 1, d) for i, d in sorted(scan_appended(rel, lines).items())]
        elif (finding := scan_whole(data)) is not None:
            found.append((rel, *finding))
    return found


def _timed(
    scan: Callable[[list[tuple[str, bytes]]], list[tuple[str, int, str]]], files, repeat: int
) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        scan(files)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small", type=int, default=10_000, help="one-line notes scanned in bulk")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (set MEMSYNC_CORPUS)", file=sys.stderr)
        return 1
    files = _files(args.corpus)
    lines = sum(data.count(b"\n") + 1 for _, data in files)
    detect("warm up: detect-secrets imports and compiles its plugins on first use")
    old_s, new_s = _timed(_old, files, args.repeat), _timed(_new, files, args.repeat)
    size = sum(len(data) for _, data in files)
    print(f"# secret scan of the corpus: {len(files)} files, {lines} lines, {size} bytes")
    print(f"old raw scan (baseline): {old_s * 1e6 / lines:6.1f} µs/line  ({old_s:.3f} s)")
    print(f"new scan as read:        {new_s * 1e6 / lines:6.1f} µs/line  ({new_s:.3f} s)")
    print(f"ratio new/old:           {new_s / old_s:6.2f}")
    for label, found in (("old", _old(files)), ("new", _new(files))):
        print(f"{label} findings: {len(found)}")
        for rel, line, detector in found:
            print(f"  {rel}:{line} {detector}")
    _bulk("corpus whole files", [data for rel, data in files if not is_append_only(rel)], args.repeat)
    _bulk(f"{args.small} one-line notes", [b"note %d\n" % i for i in range(args.small)], args.repeat)
    paths = [f"roles/qa/notes/n{i:06d}.md" for i in range(args.small)]

    def names() -> None:
        name_detectors.cache_clear()
        for rel in paths:
            scan_name(rel)

    print(f"scan_name of {args.small} new paths in one directory: {_best(names, args.repeat):.3f} s")
    return 0


def _best(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def _bulk(label: str, datas: list[bytes], repeat: int) -> None:
    """Print ``scan_whole`` per file against ``scan_wholes`` of ``datas`` in publish's write groups
    (``BATCH_FILES`` files), best of ``repeat``."""

    def grouped() -> list[tuple[int, str] | None]:
        return [v for i in range(0, len(datas), BATCH_FILES) for v in scan_wholes(datas[i : i + BATCH_FILES])]

    assert grouped() == [scan_whole(data) for data in datas], "bulk verdicts differ"
    alone = _best(lambda: [scan_whole(data) for data in datas], repeat)
    bulk = _best(grouped, repeat)
    print(
        f"{label} ({len(datas)}): scan_whole per file {alone:.3f} s, "
        f"scan_wholes by {BATCH_FILES} {bulk:.3f} s, ratio {bulk / alone:.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
