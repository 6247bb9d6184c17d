"""The markdown memory skill (seeds/002; DESIGN "Vocabulary"): :mod:`.skill` (its names and slugs),
:mod:`.frontmatter` (the one frontmatter parser: the ``---`` block and its key lines), :mod:`.fields`
(what a frontmatter says), :mod:`.index` (a ``MEMORY.md`` as items, byte for byte), :mod:`.index_items`
(the skill's index lines), :mod:`.reading` (entries and daily logs read, problems reported),
:mod:`.roledir` (a role directory and the skill's operations on it), :mod:`.writes` (log, write and
rename), :mod:`.snapshot`, :mod:`.check` and :mod:`.migrate` (the legacy paths).
"""
