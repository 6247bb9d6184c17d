"""Default sizes and counts that the CLI's help shows (``[default: 32000]``).

They live here, in a module without imports, so that building the CLI's options imports none of the
modules that use them: every hook call is a new process that builds them all.
"""

from __future__ import annotations

# The `--format prompt` block of a handoff, in bytes; cut at whole entries.
DEFAULT_HANDOFF_BYTES = 32_000
# A memory file's prompt block, in bytes; cut at whole entries.
DEFAULT_PROMPT_BYTES = 4000
# A role directory's snapshot, in bytes; cut at a whole line.
DEFAULT_SNAPSHOT_BYTES = 32_000
# Hits a recall returns unless asked for another count.
DEFAULT_RECALL_LIMIT = 10
# The most hits one recall returns.
MAX_RECALL_LIMIT = 100
