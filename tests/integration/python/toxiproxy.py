"""A Toxiproxy server of the test's own (Shopify's fault-injection TCP proxy, installed pinned by
scripts/install-deps.sh into .tools/bin) and a small client for its HTTP API: proxies between the
daemon and a dependency, and toxics switched on and off while the daemon runs."""

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from support import free_port, wait_for

SERVER = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "toxiproxy-server"


class Toxiproxy:
    def __init__(self, log_path):
        if not SERVER.exists():
            raise RuntimeError(f"{SERVER} is missing: run scripts/install-deps.sh")
        self.port = free_port()
        self.api = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen([str(SERVER), "-host", "127.0.0.1", "-port", str(self.port)],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self._up, 15, "toxiproxy API")

    def _up(self):
        try:
            return urllib.request.urlopen(self.api + "/version", timeout=1).status == 200
        except OSError:
            return False

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"toxiproxy {method} {path}: {e.code} {e.read().decode(errors='replace')}") from e

    def proxy(self, name, upstream, listen=None):
        """Creates a proxy in front of `upstream` on `listen` (default: a free loopback port); returns
        the address it listens on."""
        listen = listen or f"127.0.0.1:{free_port()}"
        self._call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        return listen

    def add(self, proxy, toxic, kind, stream="downstream", **attributes):
        self._call("POST", f"/proxies/{proxy}/toxics",
                   {"name": toxic, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes})

    def remove(self, proxy, toxic):
        self._call("DELETE", f"/proxies/{proxy}/toxics/{toxic}")

    def set_enabled(self, proxy, enabled):
        """A disabled proxy refuses and drops every connection: the dependency is gone."""
        self._call("POST", f"/proxies/{proxy}", {"enabled": enabled})

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class toxic:
    """with toxic(proxy_server, "gateway", "latency", latency=200): ... — removed on the way out."""

    def __init__(self, server, proxy, kind, stream="downstream", **attributes):
        self.server, self.proxy, self.kind, self.stream, self.attributes = server, proxy, kind, stream, attributes
        self.name = f"{kind}_{stream}_{time.monotonic_ns()}"

    def __enter__(self):
        self.server.add(self.proxy, self.name, self.kind, self.stream, **self.attributes)
        return self

    def __exit__(self, *exc):
        self.server.remove(self.proxy, self.name)
        return False
