"""The long chaos run: peers with real daemons (three by default), two writer processes each (one peer's
clock skewed by up to +/- 90 s), at least 20 SIGKILLs of daemons, the remote taken away for random
periods, one ``memsync compact``; then the writers stop, the daemons converge, and the figures for DESIGN
I1-I4 are printed.

The remote is a bare repository reached as a local path, or over a real sshd or nginx + git http-backend
(``--transport``); with ``--partitions`` the server and each peer get a network namespace (root only) and
an outage cuts the links of a random group of peers while the others go on.

Run: ``.venv/bin/python bench/chaos.py --minutes 3 [--kills 20] [--seed 1] [--keep]``, or
``.venv/bin/python bench/chaos.py --peers 8 --transport ssh --partitions --minutes 3``; ``--encrypt``: the
store is encrypted, its remote holds sealed bundles only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.chaos.harness import Chaos  # after sys.path: needs the repository root
from tests.support.servers.process import Unavailable
from tests.support.servers.transport import KINDS


def main() -> int:
    """Parse the options, run the chaos, print the figures; exit 1 when an invariant failed."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=3.0, help="How long the writers write (minutes).")
    parser.add_argument("--kills", type=int, default=20, help="At least this many daemon SIGKILLs in all.")
    parser.add_argument("--seed", type=int, default=1, help="Random seed of the run.")
    parser.add_argument("--keep", action="store_true", help="Keep the run's directory and print its path.")
    parser.add_argument("--peers", type=int, default=3, help="How many peers (machines) write and sync.")
    parser.add_argument("--transport", choices=KINDS, default="path", help="How the peers reach the remote.")
    parser.add_argument(
        "--partitions",
        action="store_true",
        help="Network namespaces (root): an outage cuts a random group of peers' links (ssh, https).",
    )
    parser.add_argument("--encrypt", action="store_true", help="The store is encrypted (sealed bundles).")
    args = parser.parse_args()
    if args.peers < 2:
        parser.error("--peers: at least 2")
    if args.partitions and args.transport == "path":
        parser.error("--partitions: needs --transport ssh or https (a path remote has no link to cut)")
    root = Path(tempfile.mkdtemp(prefix="memsync-chaos-"))
    try:
        chaos = Chaos.create(
            root,
            args.seed,
            peers=args.peers,
            transport=args.transport,
            partitions=args.partitions,
            encrypt=args.encrypt,
        )
    except Unavailable as exc:
        shutil.rmtree(root, ignore_errors=True)
        print(f"chaos: cannot run over {args.transport}: {exc}", file=sys.stderr)
        return 1
    started = time.monotonic()
    try:
        chaos.run(
            write_s=args.minutes * 60,
            min_kills=args.kills,
            log=True,
            converge_timeout_s=120 + 30 * args.peers,
        )
        chaos.stop_daemons()
        figures = chaos.check()
    finally:
        chaos.kill_all()
        if args.keep:
            print(f"run directory: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"chaos run: {args.minutes:g} min of writing, {time.monotonic() - started:.0f} s in all, "
        f"seed {args.seed}"
    )
    print(figures.render())
    failed = (
        figures.problems
        or figures.lost
        or figures.torn_blobs
        or figures.markers
        or not (figures.views_identical and figures.whole_files_identical and figures.daily_identical)
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
