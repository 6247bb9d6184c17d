"""The merge drivers: pure, symmetric three-way merges of the files of a store (DESIGN "Merge drivers",
invariants I2-I4, I9), one module per kind (:mod:`.jsonl`, :mod:`.daily`, :mod:`.index`, :mod:`.entry`),
the keyed-block merge the index and frontmatter rules share (:mod:`.keyed`), the kinds
(:mod:`.kinds`), git's per-file entry point (:mod:`.driver`) and the drivers' registration in a store
(:mod:`.registration`).

Every ``merge_KIND(base, ours, theirs) -> bytes`` is symmetric byte for byte
(``merge(b, x, y) == merge(b, y, x)``), never writes conflict markers, and is stable: ``merge(b, x, x)``
and ``merge(b, b, x)`` give ``x`` up to normalisation, and ``merge(b, m, m) == m`` for any result ``m``.
Where two versions cannot be combined, a rule that looks only at content (never at which side is ours)
decides, so crossing merges on two machines write the same bytes. The driver modules import nothing
heavy at module level: git starts the entry point once per merged file.
"""
