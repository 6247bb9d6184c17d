"""Moving memory between the live files and the store worktree: the sync state (``state``, ``records``),
a track's files (``files``, ``clashes``), the two algorithms by file kind (``appendonly``, ``wholefile``)
and the passes that run them (``passes``: publish, reconcile, deliver). DESIGN "One sync cycle" steps 2
and 5, "sync state", I1, I2, I5, I6, I7."""
