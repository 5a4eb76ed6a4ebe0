"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON messages
ending in NUL on file descriptors 3 and 4), with no client library: open a local page, wait for a promise the
page exposes (an observable condition, never a sleep), evaluate expressions, take a screenshot, and keep every
console error, uncaught exception and request that left file://.

The network is closed to the page: every host name resolves to nothing and any proxy is a closed port, so a
page that tries to fetch a script from the internet fails visibly (a request is recorded, the script missing).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
ONTO_PROTOCOL_DESCRIPTORS = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"
)
DEADLINE_SECONDS = 120  # a render that takes longer is a failure, not a wait


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    """One tab: ``call`` sends a command and returns its result; events are read as they come."""

    browser: Browser
    session: str
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    def call(self, method: str, **params) -> dict:
        return self.browser.call(method, params, self.session)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression; a promise is awaited (the browser, not this test, waits)."""
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {json.dumps(result['exceptionDetails'])[:2000]}")
        return result["result"].get("value")

    def screenshot(self, path: Path, width: int = 1200) -> None:
        """The whole page, not only the viewport, as a PNG."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def record(self, event: dict) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(str(params["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(str(params.get("request", {}).get("url")))


class Browser:
    """``with Browser() as browser: page = browser.open(url, ready="window.rendered")``."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="infx-chromium-")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # Above 3 and 4, so that moving them onto the protocol's descriptors cannot overwrite one with the other.
        child_in, child_out = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_read, from_browser_write))
        for fd in (to_browser_read, from_browser_write):
            os.close(fd)
        self.process = subprocess.Popen(
            [
                sys.executable,  # moves them onto the protocol's descriptors, 3 in and 4 out, then becomes chromium
                "-c",
                ONTO_PROTOCOL_DESCRIPTORS,
                str(child_in),
                str(child_out),
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=http://127.0.0.1:9",
                "--allow-file-access-from-files",
                "about:blank",
            ],
            pass_fds=(child_in, child_out),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its renderer and GPU processes share its group, ended with it
        )
        os.close(child_in)
        os.close(child_out)
        self.next_id, self.buffer, self.pages = 0, b"", {}

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium closed the protocol pipe (exit {self.process.poll()})")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def _event(self, message: dict) -> None:
        page = self.pages.get(message.get("sessionId"))
        if page is not None:
            page.record(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        os.write(self.to_browser, json.dumps(request).encode() + b"\0")
        while True:
            message = self._read()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def wait_for(self, session: str, method: str) -> dict:
        """The next event ``method`` of the session (the protocol delivers it; nothing polls)."""
        while True:
            message = self._read()
            self._event(message)
            if message.get("method") == method and message.get("sessionId") == session:
                return message.get("params", {})

    def open(self, url: str, ready: str) -> Page:
        """A tab at ``url``, returned once its load event fired and the promise ``ready`` settled."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = self.pages[session] = Page(self, session)
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.call(f"{domain}.enable")
        page.call("Page.navigate", url=url)
        self.wait_for(session, "Page.loadEventFired")
        deadline = (
            f"new Promise((_, no) => setTimeout(() => no(new Error('not ready in {DEADLINE_SECONDS} s')), "
            f"{DEADLINE_SECONDS * 1000}))"
        )
        page.evaluate(f"Promise.race([{ready}, {deadline}])")  # settles when the page is ready, fails at the deadline
        return page
