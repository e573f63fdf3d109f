"""Safe text: strings from a host, an incident, a model or a user made harmless to print on a terminal.

Standard library only. A job name, a kernel string or a question can carry a terminal
escape sequence (a window title, a hyperlink, a screen reset) or a bare control code;
`printable` removes them, keeping line breaks and tabs, so the text reads as written and
cannot steer the terminal. Prompt rendering (agent.llm.render) builds on it.
"""

from __future__ import annotations

import re

# Escape sequences are removed whole, so their parameters do not show up as stray text.
# String sequences (OSC, DCS, SOS, PM, APC), 7-bit or 8-bit, up to their terminator (BEL or ST);
# an unterminated one loses only its introducer, below.
_STRING_SEQ = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*?(?:\x07|\x1b\\|\x9c)"
# CSI (colours, cursor moves, erase), 7-bit or 8-bit.
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
# Every other escape: ESC, intermediates, a final byte (ESC c resets the terminal, ESC ( B ...).
_OTHER_ESC = r"\x1b[ -/]*[0-~]"
_SEQUENCES = re.compile(f"{_STRING_SEQ}|{_CSI}|{_OTHER_ESC}")
# What is left: C0 except tab and line feed, DEL, C1, and the bidirectional overrides and
# isolates, which reorder what the reader sees (the text would read other than it is).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` without escape sequences or control characters; line breaks and tabs stay."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))
