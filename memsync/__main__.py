"""`python -m memsync`: the same entry point as the `memsync` console script."""

from memsync.cli import main

raise SystemExit(main())
