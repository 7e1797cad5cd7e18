"""Untrusted text from traces made safe to print: control characters shown escaped."""

from __future__ import annotations

import re

# C0 controls (but not tab), DEL, C1 controls, and the Unicode line/paragraph separators and
# bidi overrides that can reorder or hide what a terminal shows.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """`text` with control characters and escape sequences shown as visible escapes."""
    return _UNSAFE.sub(_escape, str(text))
