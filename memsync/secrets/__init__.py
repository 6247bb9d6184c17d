"""The secret scanner (DESIGN "One sync cycle" step 2, "Hostile input", invariant I6): what it flags stays
on this machine. It reads what a reader will see, in four small steps:

- :mod:`.detectors`: which lines of a text hold a credential as written, run through :mod:`.gates`
  (detect-secrets' patterns and the checks of :mod:`.shapes`, judging values with :mod:`.values`);
- :mod:`.normalise`: NFKC, invisible characters removed;
- :mod:`.decode`: backslash escapes, percent-encoding, HTML references, base64;
- :mod:`.text`: units scanned normalised, decoded and across the seam of two lines;
- :mod:`.files`: per kind of file (memory-file lines as their JSON strings, frontmatter values, names;
  text that is not UTF-8 held back), imported by publish; it pulls in the YAML reader, which the light
  git entry point must not.
"""

from memsync.secrets.detectors import Finding
from memsync.secrets.text import scan_text

__all__ = ["Finding", "scan_text"]
