"""How long the device stays behind the kernel, destination by destination,
for ospfdiff.py: the device read every few milliseconds by a thread of its
own, against the time of the kernel's change (its route event, else the
kernel read before the one that showed it)."""
import subprocess
import threading
import time

from kdiff import bar_answers
from route_watch import last_change


class DevicePoller(threading.Thread):
    """The device's answers for addrs, read from a kdiff_bar of its own
    every few ms: per address the times its answer changed and the answer."""

    def __init__(self, bar_tool, bar_path, addrs):
        super().__init__(daemon=True)
        self.bar = subprocess.Popen([bar_tool, bar_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addrs, self.stop, self.polls = addrs, False, 0
        self.timeline = {a: [] for a in addrs}
        self._read()

    def _read(self):
        answers, t = bar_answers(self.bar, self.addrs), time.monotonic()
        for a, d in zip(self.addrs, answers):
            line = self.timeline[a]
            if not line or line[-1][1] != d:
                line.append((t, d))
        self.polls += 1

    def run(self):
        while not self.stop:
            time.sleep(0.003)
            self._read()

    def since(self, a, t):
        """The answer in force at t, then every later change: [(time, answer)]."""
        line = list(self.timeline[a])
        i = max([0] + [j for j, (ts, _) in enumerate(line) if ts <= t])
        return line[i:]

    def close(self):
        self.stop = True
        self.join()
        self.bar.stdin.close()
        self.bar.wait()


class LagMeter:
    """Per destination whose kernel answer changed: from the kernel's change
    to the first device answer exact under the new one (exact(a, answer,
    state): acceptable, and forwarded where it must be). A lag is a
    misforward window when the device was forwarding (to a path the kernel
    had left) rather than punting."""

    def __init__(self, poller, clock, exact):
        self.poller, self.clock, self.exact = poller, clock, exact
        self.begin()

    def begin(self):
        self.pending = {}
        self.mf, self.mf_worst, self.worst = set(), 0.0, 0.0

    def changed(self, a, since, until, state):
        """The kernel's answer for a changed between two reads (since, until);
        state: (answer sets, port map, neighbours) after it."""
        stamp = last_change(self.clock.spans, a)
        t = stamp if since <= stamp <= until else since
        if a in self.pending:  # changed again before the device caught up with the last one
            self._lag(a, self.pending.pop(a), t)
        self.pending[a] = (t, state)

    def _lag(self, a, item, t_end):
        t0, _ = item
        line = self.poller.since(a, t0)
        lag = t_end - t0
        self.worst = max(self.worst, lag)
        if line and line[0][1] is not None:  # not exact, yet forwarding: not acceptable
            self.mf.add(a)
            self.mf_worst = max(self.mf_worst, lag)

    def settle(self, final=False):
        """Resolves what the device has caught up with (final: all, as of now)."""
        for a, item in list(self.pending.items()):
            t0, state = item
            ok = [ts for ts, d in self.poller.since(a, t0) if self.exact(a, d, state)]
            if ok or final:
                del self.pending[a]
                if not ok or ok[0] > t0:
                    self._lag(a, item, ok[0] if ok else time.monotonic())
