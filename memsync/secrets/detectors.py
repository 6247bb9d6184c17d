"""Which lines of a text hold a credential, as written (no decoding, no normalising: the caller,
:mod:`memsync.secrets.text`, hands them what a reader will see): every detector of :mod:`.gates` on
the lines its gates match, and private key blocks flagged whole. Implements DESIGN "One sync cycle"
step 2 (scanner) and invariant I6; spec: never store secrets.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from memsync.secrets.gates import SHORT_TEXT, any_gate, case_fold, detectors
from memsync.secrets.shapes import KEY_BLOCK_BEGIN


@dataclass(frozen=True)
class Finding:
    """One flagged line. The secret value itself is deliberately not kept, so it is never echoed."""

    line: int  # 1-based within the scanned text
    detector: str


_PRIVATE_KEY = "Private Key"
_KEY_BLOCK_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# What a key block holds: base64 lines, RFC 1421 headers (Proc-Type: ...), blank lines, the END line.
_KEY_BLOCK_BODY = re.compile(r"^\s*(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*|-----END .*)\s*$")


def detect(text: str) -> list[Finding]:
    """Find lines of ``text`` that hold a secret, as written: one Finding per (line, detector), sorted.

    Lines are split on ``\\n`` only (a bare CR stays inside its line). Finding.line is 1-based. Every line
    of a private key block is flagged: from the BEGIN line to the END line, or to the last line that looks
    like key material (base64, ``Name: value`` headers) when the END line is missing.
    Never raises on any input; cost is linear (a few µs per typical line: each detector's gate is searched
    over the whole text at once, and the detector runs only on the lines its gate matches), so it can run
    on every published line. Implements DESIGN invariant I6 ("No secret leaves the machine").
    """
    lines = text.split("\n")
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    findings: set[Finding] = set()
    key_body: set[int] = set()  # 0-based indexes of the lines inside a private key block
    for match in KEY_BLOCK_BEGIN.finditer(text):
        index = bisect_right(starts, match.start()) - 1
        if index in key_body or _KEY_BLOCK_END.search(lines[index]):
            continue
        # The body of a private key block is plain base64 that no detector knows: flag it whole.
        for body in range(index + 1, len(lines)):
            if not _KEY_BLOCK_BODY.match(lines[body]):
                break
            key_body.add(body)
            if lines[body].strip():
                findings.add(Finding(body + 1, _PRIVATE_KEY))
            if _KEY_BLOCK_END.search(lines[body]):
                break
    folded = case_fold(text)
    union = any_gate() if len(text) <= SHORT_TEXT else None
    if union is not None and not (union[0].search(text) or union[1].search(folded)):
        return sorted(findings, key=lambda f: (f.line, f.detector))
    gated: dict[tuple[re.Pattern[str], bool], set[int]] = {}  # gate -> 0-based indexes of its lines
    for detector in detectors():
        candidates: set[int] = set()
        for gate in detector.gates:
            if gate not in gated:
                pattern, in_folded = gate
                gated[gate] = {
                    bisect_right(starts, match.start()) - 1
                    for match in pattern.finditer(folded if in_folded else text)
                }
            candidates |= gated[gate]
        for index in candidates - key_body:
            findings.update(Finding(index + 1, name) for name in detector.scan(lines[index]))
    return sorted(findings, key=lambda f: (f.line, f.detector))
