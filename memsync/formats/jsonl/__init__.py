"""agent-memory/0.1 memory files (JSON Lines; spec ``seeds/000_*.txt``, DESIGN "View semantics
(agent-memory/0.1)"): :mod:`.records` and :mod:`.timestamps` (the values), :mod:`.validate` (one object
as a record), :mod:`.parse` (a file read, problems reported, never fatal), :mod:`.view` (later wins,
tombstones, supersede, expiry, scope), :mod:`.prompt` (the prompt block), :mod:`.compact` (the
compacted bytes, tombstones kept) and :mod:`.location` (the default file). Reading only: writing an entry
(``memsync.memoryfile.file.MemoryFile``) also scans for secrets and checks the clock.
"""
