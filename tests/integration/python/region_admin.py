"""HBase's region admin for the fault tests: `stack/hbstack admin shell` (stack/tools/RegionAdmin.java,
HBase's Java Admin API) kept running for a test, so each move, split or merge costs its round trip,
not a JVM start. Every command answers JSON lines, the last of which has "ok"."""

import json
import subprocess
import threading

from support import STACK


class AdminError(RuntimeError):
    pass


class RegionAdmin:
    def __init__(self):
        self.process = subprocess.Popen([STACK, "admin", "shell"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        self.lock = threading.Lock()

    def call(self, *words):
        """Runs one command; returns (item lines, status line). Raises AdminError when it failed."""
        with self.lock:
            if self.process.poll() is not None:
                raise AdminError(f"hbstack admin exited {self.process.returncode} (see logs/admin.log)")
            self.process.stdin.write(" ".join(words) + "\n")
            self.process.stdin.flush()
            items = []
            while True:
                line = self.process.stdout.readline()
                if not line:
                    raise AdminError(f"hbstack admin ended during '{' '.join(words)}' (see logs/admin.log)")
                answer = json.loads(line)
                if "ok" in answer:
                    break
                items.append(answer)
        if not answer["ok"]:
            raise AdminError(f"{' '.join(words)}: {answer['error']}")
        return items, answer

    def servers(self):
        return [s["server"] for s in self.call("servers")[0]]

    def regions(self, table):
        """The table's online regions by start key: dicts with region, start, end (bytes), server."""
        items, _ = self.call("regions", table)
        for item in items:
            item["start"], item["end"] = bytes.fromhex(item["start"]), bytes.fromhex(item["end"])
        return items

    def move(self, region, server=None):
        """Moves a region (to the next other live server by default); returns the status line
        (from, to, ms) once the region is online there."""
        return self.call("move", region, *([server] if server else []))[1]

    def split(self, table, row):
        """Splits the region holding `row` (bytes) at `row`; returns the status line once both
        daughters are online."""
        return self.call("split", table, row.hex())[1]

    def merge(self, first, second):
        return self.call("merge", first, second)[1]

    def balancer(self, on):
        """Switches the balancer; returns whether it was on."""
        return self.call("balancer", "on" if on else "off")[1]["previous"] == "on"

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
