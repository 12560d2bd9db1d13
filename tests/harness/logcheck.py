# SPDX-License-Identifier: GPL-2.0-only
"""Kernel log scanning: anything here fails the test that produced it."""

from __future__ import annotations

import re

# (label, regex) - matched per line of the console log / dmesg
PATTERNS = [
    ("WARNING", r"WARNING:"),
    ("BUG", r"\bBUG:"),
    ("kernel BUG", r"kernel BUG at"),
    ("Oops", r"\bOops\b"),
    ("Call Trace", r"Call Trace"),
    ("irq nobody cared", r"nobody cared"),
    ("KASAN", r"KASAN"),
    ("KCSAN/UBSAN", r"\b(KCSAN|UBSAN):"),
    ("lockdep", r"possible circular locking|inconsistent lock state|"
                r"possible recursive locking|suspicious RCU usage|"
                r"sleeping function called from invalid context|"
                r"trying to register non-static key|DEBUG_LOCKS_WARN_ON|"
                r"turning off the locking correctness validator"),
    ("kmemleak", r"kmemleak: \d+ new suspected memory leaks"),
    ("general protection fault", r"general protection fault"),
    ("soft lockup", r"watchdog: BUG: soft lockup|soft lockup - CPU"),
    ("hard lockup", r"hard LOCKUP"),
    ("hung task", r"blocked for more than \d+ seconds|hung_task"),
    ("RCU stall", r"rcu_\w+ (self-)?detected stall|rcu: INFO: .* detected stall"),
    ("panic", r"Kernel panic"),
    ("NETDEV WATCHDOG", r"NETDEV WATCHDOG"),
    ("list corruption", r"list_(add|del) corruption"),
    ("refcount", r"refcount_t: "),
    ("page allocation failure", r"page allocation failure"),
]
_RE = [(label, re.compile(rx)) for label, rx in PATTERNS]


def find_problems(text: str, ignore=()) -> list[str]:
    """Return 'label: line' for every offending line (ignore: regexes to skip)."""
    ign = [re.compile(i) for i in ignore]
    hits = []
    for line in text.splitlines():
        for label, rx in _RE:
            if rx.search(line):
                if not any(i.search(line) for i in ign):
                    hits.append(f"{label}: {line.strip()}")
                break
    return hits


_STACK = re.compile(r"RIP: \S+|\b[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+")


def stack_lines(text: str) -> list[str]:
    """The code addresses of the kernel's reports in text (RIP lines and
    stack frames, first occurrence each, in order): where a CPU was stuck."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        for m in _STACK.finditer(line):
            seen.setdefault(m.group(0), None)
    return list(seen)


def report(text: str, ignore=(), limit: int = 15) -> str:
    """'kernel log problems:' with the offending lines of text (at most
    limit, each once) and the stack frames text holds; "" when clean."""
    problems = list(dict.fromkeys(find_problems(text, ignore)))
    if not problems:
        return ""
    msg = "kernel log problems:\n  " + "\n  ".join(problems[:limit])
    frames = stack_lines(text)
    if frames:
        msg += "\n  stacks:\n    " + "\n    ".join(frames[:16])
    return msg
