"""Untrusted text from traces made safe to print: control characters shown escaped."""

from __future__ import annotations

import re

# What a terminal must never receive from a trace: C0 controls (ESC starts CSI, OSC and DCS
# sequences; tab and newline break the layout), DEL, C1 controls (U+009B is a one-character
# CSI), the Unicode line and paragraph separators, the bidi controls (marks, embeddings,
# overrides and isolates, which reorder or hide what is shown) and lone surrogates (a file
# name that is not UTF-8; printing one raises instead of showing it).
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x1f{_OTHERS}]")
_UNSAFE_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """`text` with control characters and escape sequences shown as visible escapes
    (``\\x1b``, ``\\n``, ``\\u202e``), on one line."""
    return _UNSAFE.sub(_escape, str(text))


def safe_lines(text: str) -> str:
    """`text` shown escaped as :func:`safe` does, but keeping its newlines (a CRLF becomes a
    newline), for many lines of untrusted text such as CSV sent to a terminal."""
    return _UNSAFE_BUT_NEWLINE.sub(_escape, text.replace("\r\n", "\n"))


def safe_json(text: str) -> str:
    """JSON text made safe for a terminal and still valid JSON with the same meaning: the
    characters a JSON encoder may leave raw inside strings (DEL, C1, bidi controls, U+2028,
    U+2029, lone surrogates) written as ``\\uXXXX``. Raw controls can only be inside strings,
    since JSON's own whitespace outside them is kept (newlines of indented output)."""
    return _UNSAFE_BUT_NEWLINE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
