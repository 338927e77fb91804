"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ended by a NUL byte on file descriptors 3 and 4), so the tests need no client
library: open a page, evaluate JavaScript in it, collect its console errors and the requests it
makes, take a screenshot. Used by test_report_html.py."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
MISSING = "needs Debian's chromium (make setup installs it with apt when root)"


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; use as a context manager (the browser it started
    is ended by its pid on exit)."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 1000, timeout: float = 60.0):
        if CHROMIUM is None:
            raise BrowserError(MISSING)
        self.timeout = timeout
        self.events: list[dict] = []
        self._buf = b""
        self._id = 0
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def fds() -> None:  # in the child: the pipe's ends on 3 (reads) and 4 (writes)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (to_chrome_r, from_chrome_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        args = [CHROMIUM, "--headless", "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                *(["--no-sandbox"] if os.geteuid() == 0 else []), "about:blank"]
        # pass_fds keeps 3 and 4, which fds() sets up, open past the child's closing of the others
        self.proc = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=fds,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                              "deviceScaleFactor": 1, "mobile": False}, session=True)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._r], [], [], max(0.0, left))
            if not ready:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: Optional[dict] = None, session: bool = False) -> dict:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method: str, after: int = 0) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for m in self.events[after:]:
                if m["method"] == method:
                    return m
            after = len(self.events)
            m = self._read(deadline)
            if "method" in m:
                self.events.append(m)

    def open(self, url: str) -> None:
        """Navigate and wait for the page's load event (a new fragment of the page that is open
        is no new load: open another page first to load it anew)."""
        mark = len(self.events)
        r = self.call("Page.navigate", {"url": url}, session=True)
        if r.get("errorText"):
            raise BrowserError(f"{url}: {r['errorText']}")
        if r.get("loaderId"):  # a move within the same page (its fragment) loads nothing
            self.wait_event("Page.loadEventFired", mark)

    def eval(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      session=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}...: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def errors(self) -> list[str]:
        """The console's errors so far: uncaught exceptions, console.error, and the browser's
        own error entries (a resource that failed to load)."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(json.dumps(p.get("args", []))[:300])
            elif m["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", "")[:300])
        return out

    def requests(self) -> list[str]:
        """The addresses of every request the page made."""
        return [m["params"]["request"]["url"] for m in self.events if m["method"] == "Network.requestWillBeSent"]
