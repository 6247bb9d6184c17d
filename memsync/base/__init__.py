"""The base every layer stands on: the one git runner, safe file I/O, paths, store path kinds, wording."""
