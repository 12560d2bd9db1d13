# SPDX-License-Identifier: GPL-2.0-only
"""Synchronous QMP client with an event backlog (no threads)."""

from __future__ import annotations

import json
import select
import socket
import time

from .util import VmTestError, log


class QMPError(VmTestError):
    def __init__(self, command: str, error: dict):
        self.command = command
        self.error = error
        super().__init__(f"QMP {command}: {error.get('class')}: {error.get('desc')}")


class QMP:
    def __init__(self, path: str, timeout: float = 30.0, logfile=None):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as e:
            raise VmTestError(f"QMP: cannot connect to {path}: {e}") from None
        self.buf = b""
        self.events: list[dict] = []
        self._id = 0
        self.logfile = logfile
        self.greeting = self._read_msg(timeout)
        if "QMP" not in self.greeting:
            raise VmTestError(f"unexpected QMP greeting: {self.greeting}")
        self.cmd("qmp_capabilities")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _log(self, text: str):
        if self.logfile:
            self.logfile.write(text + "\n")
            self.logfile.flush()

    def _read_msg(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise VmTestError("QMP: timed out waiting for a message")
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            try:
                data = self.sock.recv(65536)
            except OSError as e:
                raise VmTestError(f"QMP: {e} (QEMU exited?)") from None
            if not data:
                raise VmTestError("QMP: connection closed (QEMU exited?)")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        self._log("<- " + line.decode(errors="replace"))
        return msg

    def cmd(self, command: str, timeout: float = 60.0, **args):
        """Execute a command and return its 'return' value (raises QMPError)."""
        self._id += 1
        req = {"execute": command, "id": self._id}
        if args:
            req["arguments"] = {k.replace("__", "-"): v for k, v in args.items()}
        line = json.dumps(req)
        self._log("-> " + line)
        log(f"qmp: {line}", 2)
        try:
            self.sock.sendall(line.encode() + b"\n")
        except OSError as e:
            raise VmTestError(f"QMP: {e} (QEMU exited?)") from None
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read_msg(max(0.0, deadline - time.monotonic()))
            if "event" in msg:
                self.events.append(msg)
                continue
            if msg.get("id") != self._id:
                continue
            if "error" in msg:
                raise QMPError(command, msg["error"])
            return msg.get("return")

    def poll_events(self) -> None:
        """Move any event already received into self.events."""
        while True:
            r, _, _ = select.select([self.sock], [], [], 0)
            if not r and b"\n" not in self.buf:
                return
            msg = self._read_msg(1.0)
            if "event" in msg:
                self.events.append(msg)

    def wait_event(self, name: str, timeout: float = 30.0, match: dict | None = None,
                   consume: bool = True) -> dict:
        """Wait for an event named name whose 'data' contains the items of match.

        Events received earlier (e.g. during a command) are looked at first."""
        deadline = time.monotonic() + timeout

        def hit(ev):
            if ev.get("event") != name:
                return False
            data = ev.get("data", {})
            return all(data.get(k) == v for k, v in (match or {}).items())

        while True:
            for i, ev in enumerate(self.events):
                if hit(ev):
                    if consume:
                        del self.events[i]
                    return ev
            left = deadline - time.monotonic()
            if left <= 0:
                raise VmTestError(f"QMP: no {name} event {match or ''} within {timeout}s")
            try:
                msg = self._read_msg(left)
            except VmTestError:
                if time.monotonic() >= deadline:
                    continue
                raise
            if "event" in msg:
                self.events.append(msg)

    def clear_events(self, name: str | None = None) -> None:
        self.poll_events()
        self.events = [e for e in self.events if name and e.get("event") != name]
