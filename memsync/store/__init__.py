"""The store: a git working tree only memsync writes, and its exchange with remotes (DESIGN "One sync
cycle" steps 3-4, I3, I7, I8, I9). ``facade.Store`` is the one entry point; the modules beside it each
do one job of it."""
