# SPDX-License-Identifier: GPL-2.0-only
"""Named tests that share guest boots, with PASS/FAIL lines, timing and logs.

A suite is a list of TestCase in run order. Consecutive tests whose VMConfig
is equal run in the same guest; a failed test (or a dead guest) makes the next
test boot a fresh one. After every test the kernel log written since the test
started must be clean (logcheck). Logs of failed tests are copied to
build/test-logs/<release>-<driver>/<test>/.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .guest import Guest, VMConfig
from .kernels import KernelImage
from .util import REPO_ROOT, CheckFailed, VmTestError, log, timeout_scale


class TestTimeout(Exception):
    pass


@dataclass
class TestCase:
    name: str
    func: Callable
    config: VMConfig
    boot: str = "default"  # label of the boot configuration (for the report)
    smoke: bool = False
    doc: str = ""
    timeout: float = 300.0
    ignore_log: tuple = ()  # regexes of kernel log lines this test may produce


class Suite:
    def __init__(self, name: str):
        self.name = name
        self.tests: list[TestCase] = []

    def test(self, name: str, config: VMConfig, boot: str, smoke: bool = False,
             timeout: float = 300.0, ignore_log: tuple = ()):
        def deco(fn):
            self.add(TestCase(name, fn, config, boot, smoke, (fn.__doc__ or "").strip(),
                              timeout, ignore_log))
            return fn
        return deco

    def add(self, t: TestCase):
        if any(x.name == t.name for x in self.tests):
            raise ValueError(f"duplicate test name {t.name}")
        self.tests.append(t)

    def select(self, only: list[str] | None = None, smoke: bool = False) -> list[TestCase]:
        tests = [t for t in self.tests if t.smoke] if smoke else list(self.tests)
        if only:
            unknown = [n for n in only if not any(t.name == n or t.name.startswith(n + ".")
                                                  for t in self.tests)]
            if unknown:
                raise VmTestError(f"unknown test(s): {', '.join(unknown)} (see --list)")
            tests = [t for t in self.tests
                     if any(t.name == n or t.name.startswith(n + ".") for n in only)]
        return tests


@dataclass
class Ctx:
    """What a test function gets."""
    guest: Guest
    kernel: KernelImage
    driver: str
    module: Path | None
    notes: list = field(default_factory=list)

    @property
    def g(self) -> Guest:
        return self.guest

    def note(self, msg: str) -> None:
        """A detail shown after the PASS/FAIL line (e.g. a measured rate)."""
        self.notes.append(msg)
        log("  " + msg, 1)


@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    message: str = ""
    boot: str = ""
    notes: list = field(default_factory=list)


def _alarm(_sig, _frm):
    raise TestTimeout("test timed out")


class Runner:
    def __init__(self, kernel: KernelImage, driver: str, module: Path | None,
                 logs_root: Path | None = None, out=sys.stdout):
        self.kernel = kernel
        self.driver = driver
        self.module = module
        self.out = out
        self.logs = (logs_root or REPO_ROOT / "build" / "test-logs") / f"{kernel.release}-{driver}"
        self.results: list[Result] = []
        self.boots: list[tuple[str, float]] = []
        self.guest: Guest | None = None
        self.guest_boot: str = ""
        self.failed_boots: dict[VMConfig, str] = {}  # don't retry a config that failed twice
        # (name, fn(guest) -> note) run on every guest before it is stopped;
        # each is reported as a test "<name>@<boot>" (e.g. a kmemleak scan)
        self.guest_checks: list[tuple[str, Callable]] = []

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _save_logs(self, name: str, guest: Guest | None, message: str) -> Path:
        dest = self.logs / name
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "failure.txt").write_text(message + "\n")
        if guest:
            if guest.alive():
                try:
                    if "guest agent" in message:
                        # the guest stopped answering: where are its CPUs,
                        # and its tasks (on the console, saved below)?
                        (dest / "vcpus.txt").write_text(guest.vcpu_dump())
                        guest.sysrq("wt")
                        (dest / "hang-probe.txt").write_text(guest.hang_probe())
                    guest.drain_dmesg()
                except (OSError, VmTestError) as e:
                    # an agent whose connection broke (the failure itself,
                    # often): the console below is what is left to save
                    (dest / "agent-error.txt").write_text(f"{e!r}\n")
            guest.save_logs(dest)
        return dest

    def _stop_guest(self) -> None:
        if self.guest:
            self._guest_checks(self.guest)
            self.guest.shutdown()
            self.guest = None

    def _guest_checks(self, g: Guest) -> None:
        for name, fn in self.guest_checks:
            if not g.alive() or (g.agent and g.agent.broken):
                self._finish(TestCase(f"{name}@{self.guest_boot}", fn, g.cfg), False, 0.0,
                             "guest not usable any more", [])
                continue
            t0 = time.monotonic()
            try:
                ok, msg, notes = True, "", [fn(g)]
            except (CheckFailed, VmTestError) as e:
                ok, msg, notes = False, str(e), []
                self._save_logs(f"{name}@{self.guest_boot}", g, msg)
            self._finish(TestCase(f"{name}@{self.guest_boot}", fn, g.cfg), ok,
                         time.monotonic() - t0, msg, notes)

    def _boot(self, t: TestCase) -> Guest:
        g = Guest(self.kernel, t.config, driver=self.driver, module=self.module,
                  keep_workdir=False)
        t0 = time.monotonic()
        try:
            g.boot()
        except BaseException as e:
            # Guest.boot() stopped QEMU but kept the workdir for us
            dest = self._save_logs(t.name, g, f"boot failed: {e}")
            g.shutdown(keep_workdir=False)
            if isinstance(e, VmTestError):
                raise VmTestError(str(e).replace(str(g.workdir), str(dest))) from None
            raise
        dt = time.monotonic() - t0
        self.boots.append((t.boot, dt))
        self.say(f"BOOT  {t.boot:<22} {dt:6.1f}s  {t.config.describe()}")
        return g

    def run(self, tests: list[TestCase]) -> bool:
        import shutil
        # only the logs of the tests about to run: another suite's failure
        # logs for the same kernel and driver stay for the reader
        for t in tests:
            shutil.rmtree(self.logs / t.name, ignore_errors=True)
        t_all = time.monotonic()
        old = signal.signal(signal.SIGALRM, _alarm)
        try:
            for t in tests:
                self._run_one(t)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
            self._stop_guest()
        total = time.monotonic() - t_all
        npass = sum(r.ok for r in self.results)
        nfail = len(self.results) - npass
        boot_total = sum(b for _, b in self.boots)
        self.say("")
        self.say(f"Summary: kernel {self.kernel.key} ({self.kernel.release}), driver {self.driver}"
                 f"{' ' + str(self.module) if self.module else ''}")
        self.say(f"  {len(self.boots)} boots ({boot_total:.0f}s), total {total:.0f}s")
        for r in self.results:
            if not r.ok:
                self.say(f"  FAILED {r.name}: {r.message.splitlines()[0] if r.message else ''}")
        if nfail:
            self.say(f"  logs of failed tests: {self.logs}")
        self.say(f"{npass} passed, {nfail} failed")
        return nfail == 0

    def _run_one(self, t: TestCase) -> None:
        g = self.guest
        if g is not None and (g.cfg != t.config or not g.alive()
                              or (g.agent and g.agent.broken)):
            self._stop_guest()
            g = None
        t0 = time.monotonic()
        if g is None:
            if self.failed_boots.get(t.config, "").startswith("2:"):
                self._finish(t, False, 0.0, "not run: boot " + self.failed_boots[t.config][2:], [])
                return
            try:
                g = self.guest = self._boot(t)
                self.guest_boot = t.boot
            except (VmTestError, OSError) as e:
                msg = f"boot failed: {e}"
                n = 2 if t.config in self.failed_boots else 1
                self.failed_boots[t.config] = f"{n}:{t.boot} failed twice"
                self._finish(t, False, time.monotonic() - t0, msg, [])
                return
        ctx = Ctx(g, self.kernel, self.driver, self.module)
        t0 = time.monotonic()
        ok, msg, tb = True, "", ""
        try:
            # the whole log is checked: the first test of a guest also
            # answers for its boot, later ones for what came after the
            # previous test's check
            mark = g.log_checked
            signal.alarm(int(t.timeout * timeout_scale()))
            try:
                t.func(ctx)
            finally:
                signal.alarm(0)
            g.check_log(mark, ignore=t.ignore_log)
            g.log_checked = g.read_to
        except KeyboardInterrupt:
            raise
        except (CheckFailed, AssertionError) as e:
            ok, msg = False, str(e) or repr(e)
        except TestTimeout:
            ok, msg = False, f"timed out after {t.timeout * timeout_scale():.0f}s"
        except Exception as e:
            ok, msg = False, f"{type(e).__name__}: {e}"
            tb = traceback.format_exc()
        dt = time.monotonic() - t0
        if not ok:
            # a log problem found later is still worth reporting with the
            # failure, before the traceback: a summary that shows only the
            # message's head still shows why a guest stopped answering
            try:
                problems = g.new_log(mark) if g.alive() else ""
                from .logcheck import report
                extra = report(problems, t.ignore_log, 10)
                if extra and "kernel log problems" not in msg:
                    msg += "\n" + extra
            except Exception:
                pass
            if tb:
                msg += "\n" + tb
            self._save_logs(t.name, g, msg)
            self._stop_guest()
        self._finish(t, ok, dt, msg, ctx.notes)

    def _finish(self, t: TestCase, ok: bool, dt: float, msg: str, notes: list) -> None:
        self.results.append(Result(t.name, ok, dt, msg, t.boot, notes))
        line = f"{'PASS' if ok else 'FAIL'}  {t.name:<28} {dt:6.1f}s"
        if notes:
            line += "  " + "; ".join(notes)
        self.say(line)
        if not ok:
            for ln in msg.splitlines()[:25]:
                self.say(f"      {ln}")
