"""The one writer of memory files: a memory file's operations, the append path, the clock check."""
