"""Benchmark of the secret scan every published line goes through: memsync's scanner (detect-secrets'
regex plugins behind a keyword gate, plus memsync's own detectors) against detect-secrets' regex plugins
run on every line without a gate, over the same text in the same run.

Run: ``.venv/bin/python bench/scan_bench.py [--lines 5000] [--repeat 3]``.
Target: under 1 ms per line (a 5,000-line first sync spends at most 5 s scanning) and a ratio below 1.
"""

from __future__ import annotations

import argparse
import time

from memsync.secrets import scan_text

LINE = (
    "ACMP design rule: a breadcrumb sits 12px above content — owned on .breadcrumb; see "
    "https://github.com/org/repo/issues/153#issuecomment-123456789 (PR #155, `7991f93`)."
)


def _baseline(lines: list[str]) -> None:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    classes = get_mapping_from_secret_type_to_class().values()
    plugins = [cls() for cls in classes if issubclass(cls, RegexBasedDetector)]
    for line in lines:
        for plugin in plugins:
            list(plugin.analyze_line(filename="memory", line=line, line_number=0))


def _best(run: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lines = [LINE] * args.lines
    scan_text("warm-up\n")
    ours = _best(lambda: scan_text("\n".join(lines)), args.repeat)
    theirs = _best(lambda: _baseline(lines), args.repeat)
    per_line = ours / args.lines
    print(f"## secret scan, {args.lines} lines of {len(LINE)} bytes, best of {args.repeat}")
    print("| scanner | total (s) | per line (µs) |")
    print("| --- | --- | --- |")
    print(f"| memsync scan_text | {ours:.3f} | {per_line * 1e6:.0f} |")
    print(f"| detect-secrets regex plugins, ungated | {theirs:.3f} | {theirs / args.lines * 1e6:.0f} |")
    print(f"ratio memsync / baseline: {ours / theirs:.2f}")
    print(f"target per line < 1000 µs: {'PASS' if per_line < 0.001 else 'FAIL'}")
    return 0 if per_line < 0.001 else 1


if __name__ == "__main__":
    raise SystemExit(main())
