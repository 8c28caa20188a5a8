"""Load generator run as a separate process by the load test: ``python load_client.py URL
TOKEN REQUESTS WORKERS``. Each worker keeps one HTTP/1.1 connection; every POST carries a
unique ``pageid`` that the server echoes, so a lost or mixed-up response is detected. Prints
one JSON summary line."""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.parse

LINKS = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Anarchism"
TRANSLATION = "/service/lw/recommendation/api/v1/translation?source=en&target=fr&count=5"
WIKITEXT = "'''Anarchism''' is a political philosophy and movement against authority."


def main() -> int:
    url, token, total, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    parts = urllib.parse.urlsplit(url)
    lock = threading.Lock()
    next_id = iter(range(total))
    ok: list[int] = []
    errors: list[str] = []
    latencies: list[float] = []

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        while True:
            with lock:
                i = next(next_id, None)
            if i is None:
                break
            started = time.perf_counter()
            try:
                if i % 3 == 2:
                    conn.request("GET", TRANSLATION)
                    reply = conn.getresponse()
                    body = json.loads(reply.read())
                    good = reply.status == 200 and len(body) == 5
                else:
                    payload = json.dumps({"wikitext": WIKITEXT, "revid": i, "pageid": i})
                    headers = {
                        "Authorization": f"Bearer {token}",
                        "Content-Type": "application/json",
                    }
                    conn.request("POST", LINKS + "?threshold=0.1", payload, headers)
                    reply = conn.getresponse()
                    body = json.loads(reply.read())
                    good = reply.status == 200 and body["pageid"] == i and body["revid"] == i
            except (OSError, http.client.HTTPException, ValueError) as err:
                conn.close()
                conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
                with lock:
                    errors.append(f"{i}: {err!r}")
                continue
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                (ok.append(i) if good else errors.append(f"{i}: status {reply.status}"))
        conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    summary = {
        "requests": total,
        "ok": len(ok),
        "distinct_ok": len(set(ok)),
        "errors": errors[:20],
        "seconds": round(elapsed, 3),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2) if latencies else None,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
