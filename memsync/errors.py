"""The one error type for "the user must act"."""


class MemsyncError(Exception):
    """A failure the user can fix; its text is one line: "<what failed>: <why>. <what to do>".

    The CLI prints it without a traceback and exits with code 1.
    """
