#!/usr/bin/python3
"""The monitoring dashboard in a real browser (Debian's chromium, driven by
chromium-driver through selenium): a 4-rank job whose rank 2 sleeps 200 ms before
every collective; the page served by rank 0's endpoint must load, name rank 2 the
straggler, outline rank 2's row of the arrival-skew heat map and colour it darker
than every other row, and show the same numbers as the endpoint's /job.json. Takes
the screenshot docs/monitoring.md shows. Exits 77 (skipped) with the reason when
the browser or its driver is missing.

    dashboard_test.py <monitor_worker> <screenshot.png>
"""
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser"))
import headless_chromium  # noqa: E402


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read().decode()


# Everything the checks read, taken in one go: the page redraws every second.
SNAPSHOT = """
const attrs = (sel, names) => Array.from(document.querySelectorAll(sel)).map(e => names.map(n => e.getAttribute(n)));
return {
  stragglers: Array.from(document.querySelectorAll('li.finding[data-kind="straggler"]'))
                   .map(e => ({peer: e.getAttribute('data-peer'), text: e.textContent})),
  outlined: attrs('rect.straggler-row', ['data-rank']).map(a => a[0]),
  cells: attrs('rect.cell', ['data-rank', 'data-ms']),
  rates: attrs('table[id^=rates] tr[data-rank]', ['data-rank', 'data-ops']),
  links: attrs('table[id^=links] tr[data-rank]', ['data-rank', 'data-peer', 'data-gbps']),
};
"""


def read(browser):
    return browser.execute_script(SNAPSHOT)


def main():
    worker, screenshot = sys.argv[1], sys.argv[2]
    headless_chromium.require()

    n, base, root = 4, random.randint(30000, 39000), random.randint(20000, 29000)
    env = dict(os.environ, HOSTCCL_METRICS_PORT=str(base), HOSTCCL_METRICS_INTERVAL_MS="250")
    # 40 collectives with rank 2 late by 200 ms each (8 s), then 25 s still: the page
    # is read while the job runs and compared with the endpoint once it holds still.
    procs = [subprocess.Popen([worker, f"127.0.0.1:{root}", str(r), str(n), "40", "4096", "2", "200", "25000"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for r in range(n)]
    failed = []
    try:
        port0 = None
        deadline = time.time() + 30
        while port0 is None and time.time() < deadline:
            for p in range(base, base + n + 4):
                try:
                    st = json.loads(get(p, "/status.json"))
                except Exception:
                    continue
                if any(c["rank"] == 0 for c in st["communicators"]):
                    port0 = p
            time.sleep(0.2)
        assert port0, "rank 0's endpoint never answered"

        with headless_chromium.opened(1280, 1500) as browser:
            browser.get(f"http://127.0.0.1:{port0}/")
            # The straggler is named on the page (within 10 s of the job's start).
            page = read(browser)
            deadline = time.time() + 20
            while not page["stragglers"] and time.time() < deadline:
                time.sleep(0.25)
                page = read(browser)
            if not page["stragglers"]:
                failed.append("the page never named a straggler")
            else:
                print("page says:", page["stragglers"][0]["text"])
                if [f["peer"] for f in page["stragglers"]] != ["2"]:
                    failed.append(f"the page named {page['stragglers']} the straggler, not rank 2")
            # Let the heat map gather a few seconds of the late rank, then check it.
            time.sleep(4)
            page = read(browser)
            if page["outlined"] != ["2"]:
                failed.append(f"outlined rows {page['outlined']}, expected only rank 2's")
            heat = {}
            for r, ms in page["cells"]:
                heat[int(r)] = heat.get(int(r), 0.0) + float(ms)
            print("heat map, ms waited per collective summed over columns:", {r: round(v, 1) for r, v in heat.items()})
            if not heat or max(heat, key=heat.get) != 2 or any(heat[r] >= heat[2] / 4 for r in heat if r != 2):
                failed.append(f"rank 2's row is not the darkest by far: {heat}")
            # Once the job holds still, the page's numbers are the endpoint's.
            deadline = time.time() + 30
            while time.time() < deadline and any(int(ops or 0) < 40 for _, ops in page["rates"]):
                time.sleep(0.5)
                page = read(browser)
            time.sleep(2.5)
            page = read(browser)
            view = json.loads(get(port0, "/job.json"))[0]
            for r, ops in page["rates"]:
                want = sum(c["count"] for c in view["ranks"][int(r)]["status"]["collectives"])
                if int(ops) != want:
                    failed.append(f"rank {r}: the page shows {ops} collectives, the endpoint {want}")
            if len(page["rates"]) != n:
                failed.append(f"the page lists {len(page['rates'])} ranks, not {n}")
            for r, peer, gbps in page["links"]:
                link = next(l for l in view["ranks"][int(r)]["status"]["links"] if l["peer"] == int(peer))
                want = link["bytes_per_second"]
                if (gbps == "") != (want is None) or (want is not None and abs(float(gbps) - want / 1e9) > 1e-5):
                    failed.append(f"link {peer}->{r}: the page shows {gbps} GB/s, the endpoint {want}")
            print(f"compared {len(page['rates'])} ranks' collectives and {len(page['links'])} links with /job.json")
            browser.save_screenshot(screenshot)
            print("screenshot:", screenshot)
    finally:
        for p in procs:
            p.wait(timeout=120)
            if p.returncode != 0:
                failed.append(f"a worker exited with {p.returncode}: {p.stdout.read().decode()[-2000:]}")
    for f in failed:
        print("FAILED:", f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
