# SPDX-License-Identifier: GPL-2.0-only
"""Host side of the serial-port guest agent (see guestfs/vnet-agent)."""

from __future__ import annotations

import base64
import re
import secrets
import select
import socket
import time

from .util import VmTestError, log, timeout_scale

READY_RE = re.compile(rb"@@VNET - READY (\S*)\n")


class AgentError(VmTestError):
    pass


class Result(tuple):
    """(rc, stdout) with extra attributes: err (stderr), timed_out, cmd."""

    def __new__(cls, rc: int, out: str, err: str = "", timed_out: bool = False, cmd: str = ""):
        self = super().__new__(cls, (rc, out))
        self.err = err
        self.timed_out = timed_out
        self.cmd = cmd
        return self

    @property
    def rc(self) -> int:
        return self[0]

    @property
    def out(self) -> str:
        return self[1]

    @property
    def ok(self) -> bool:
        return self[0] == 0

    def __repr__(self):
        return f"Result(rc={self.rc}, out={self.out[:200]!r}, err={self.err[:200]!r})"


class Agent:
    def __init__(self, sock: socket.socket, logfile=None):
        self.sock = sock
        self.buf = b""
        self.logfile = logfile
        self.broken: str | None = None
        self.rawtail = b""   # the last bytes received, for a hang report
        self.sent: list[str] = []   # and the last requests sent
        self.ready_status: str | None = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _log(self, text: str):
        if self.logfile:
            self.logfile.write(text + ("\n" if not text.endswith("\n") else ""))
            self.logfile.flush()

    def _fill(self, deadline: float, alive=None) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            r, _, _ = select.select([self.sock], [], [], min(left, 1.0))
            if r:
                data = self.sock.recv(1 << 16)
                if not data:
                    self.broken = "agent connection closed (QEMU exited?)"
                    raise AgentError(self.broken)
                self.buf += data
                self.rawtail = (self.rawtail + data)[-4096:]
                return
            if alive is not None and not alive():
                self.broken = "QEMU exited"
                raise AgentError(self.broken)

    def _wait_for(self, pattern: re.Pattern, deadline: float, alive=None) -> re.Match:
        while True:
            m = pattern.search(self.buf)
            if m:
                return m
            self._fill(deadline, alive)

    def wait_ready(self, timeout: float, alive=None) -> str:
        try:
            m = self._wait_for(READY_RE, time.monotonic() + timeout, alive)
        except TimeoutError:
            raise AgentError(f"guest agent not ready within {timeout:.0f}s") from None
        self.buf = self.buf[m.end():]
        self.ready_status = m.group(1).decode()
        return self.ready_status

    def _send(self, line: str, pause: float = 0.0):
        """Send one request line; with pause, its first half, a pause,
        then the rest (tests how the agent reads a line that arrives in
        pieces)."""
        if self.broken:
            raise AgentError(f"agent unusable: {self.broken}")
        data = line.encode() + b"\n"
        if pause:
            self.sock.sendall(data[:len(data) // 2])
            time.sleep(pause)
            data = data[len(data) // 2:]
        self.sock.sendall(data)
        self.sent = (self.sent + [f"{time.monotonic():.1f} {line[:30]}"])[-5:]

    def ping(self, timeout: float = 10.0) -> bool:
        tok = secrets.token_hex(6)
        self._send(f"PING {tok}")
        try:
            m = self._wait_for(re.compile(rb"@@VNET " + tok.encode() + rb" PONG\n"),
                               time.monotonic() + timeout)
        except TimeoutError:
            return False
        self.buf = self.buf[m.end():]
        return True

    def run(self, cmd: str, timeout: float = 60.0, alive=None, quiet: bool = False,
            pause: float = 0.0) -> Result:
        """Run a shell script in the guest; the guest kills it after timeout
        (pause: see _send)."""
        tok = secrets.token_hex(6)
        b64 = base64.b64encode(cmd.encode()).decode()
        t0 = time.monotonic()
        self._send(f"RUN {tok} {max(1, int(round(timeout)))} {b64}", pause)
        end_re = re.compile(rb"\n@@VNET " + tok.encode() + rb" BEGIN\n(.*?)@@VNET " + tok.encode()
                            + rb" ERR\n(.*?)@@VNET " + tok.encode() + rb" END (\d+) ?(\w*)\n", re.S)
        # the guest enforces the timeout; allow for a slow serial line on top
        try:
            m = self._wait_for(end_re, time.monotonic() + timeout + 30 + len(cmd) / 2000, alive)
        except TimeoutError:
            self.broken = f"no answer to {cmd[:80]!r} within {timeout + 30:.0f}s"
            raise AgentError(f"guest agent: {self.broken}") from None
        self.buf = self.buf[m.end():]
        out = base64.b64decode(b"".join(m.group(1).split())).decode(errors="replace")
        err = base64.b64decode(b"".join(m.group(2).split())).decode(errors="replace")
        rc = int(m.group(3))
        timed_out = m.group(4) == b"timeout"
        res = Result(rc, out, err, timed_out, cmd)
        if not quiet:
            self._log(f"$ {cmd}\n[rc={rc}{' TIMEOUT' if timed_out else ''} "
                      f"{time.monotonic() - t0:.2f}s]\n{out}" + (f"[stderr]\n{err}" if err else ""))
        log(f"guest$ {cmd[:100]} -> rc={rc}", 2)
        return res

    def spawn(self, cmd: str, timeout: float = 30.0) -> tuple[str, int]:
        """Start a background command; returns (token, process group id)."""
        tok = secrets.token_hex(6)
        b64 = base64.b64encode(cmd.encode()).decode()
        self._send(f"BG {tok} {b64}")
        try:
            m = self._wait_for(re.compile(rb"@@VNET " + tok.encode() + rb" BG (\d+)\n"),
                               time.monotonic() + timeout)
        except TimeoutError:
            self.broken = f"no answer to BG {cmd[:80]!r}"
            raise AgentError(f"guest agent: {self.broken}") from None
        self.buf = self.buf[m.end():]
        pid = int(m.group(1))
        self._log(f"$ {cmd} &\n[bg pid={pid} id={tok}]")
        return tok, pid


AGENT_DIR = "/run/vnet/agent"


class GuestBg:
    """A background command in the guest (Guest.run_bg)."""

    def __init__(self, guest, tok: str, pid: int, cmd: str):
        self.guest = guest
        self.tok = tok
        self.pid = pid
        self.cmd = cmd
        self.rc: int | None = None
        # kept once read after the command ended; before, read every time
        self._out: str | None = None
        self._err: str | None = None
        self._out_final = self._err_final = False

    @property
    def _f(self):
        return f"{AGENT_DIR}/{self.tok}"

    def poll(self) -> int | None:
        if self.rc is None:
            r = self.guest.run(f"cat {self._f}.rc 2>/dev/null", timeout=15, quiet=True)
            if r.out.strip().isdigit():
                self.rc = int(r.out.strip())
        return self.rc

    def wait(self, timeout: float = 60.0, interval: float = 0.5) -> int:
        """Wait for the command to end; returns its exit status."""
        deadline = time.monotonic() + timeout * timeout_scale()
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise VmTestError(f"guest background command still running after "
                                  f"{timeout}s: {self.cmd}")
            time.sleep(interval)
        return self.rc

    def kill(self, sig: str = "TERM") -> None:
        self.guest.run(f"kill -{sig} -- -{self.pid} 2>/dev/null; true", timeout=15, quiet=True)

    def output(self) -> str:
        if not self._out_final:
            self._out_final = self.rc is not None
            self._out = self.guest.run(f"cat {self._f}.out", timeout=30, quiet=True).out
        return self._out

    def stderr(self) -> str:
        if not self._err_final:
            self._err_final = self.rc is not None
            self._err = self.guest.run(f"cat {self._f}.err", timeout=30, quiet=True).out
        return self._err

    def result(self, timeout: float = 60.0) -> Result:
        rc = self.wait(timeout)
        res = Result(rc, self.output(), self.stderr(), False, self.cmd)
        self.guest.run(f"rm -f {self._f} {self._f}.out {self._f}.err {self._f}.rc {self._f}.pid",
                       timeout=15, quiet=True)
        return res
