#!/usr/bin/python3
"""hostccl-plan's HTML report in a real browser (Debian's chromium, driven by
chromium-driver through selenium), opened from the file as a user opens it
offline: the legend's entries and each plan's label must not overlap anything
(their widths are the browser's, not the planner's estimate), each plan's bar
parts must add up to the step it prints, the bars' lengths must be in proportion
to those steps and fit the plot, and the plans must run fastest first (a compressed
one only when clearly faster). Saves a screenshot. Exits 77 (skipped) with the
reason when the browser or its driver is missing.

    report_browser_test.py <hostccl-plan> <train_mlp> <screenshot.png>
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser"))
import headless_chromium  # noqa: E402


# Every box the checks read, in page pixels.
SNAPSHOT = """
const svg = document.querySelector('svg');
const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const texts = Array.from(svg.querySelectorAll('text'));
return {
  svg: box(svg),
  legend: Array.from(svg.querySelectorAll('rect')).filter(r => r.getAttribute('y') === '8')
               .map((r, i) => ({swatch: box(r), text: box(texts[i]), name: texts[i].textContent})),
  rows: texts.filter(t => /^\\d+\\. dp/.test(t.textContent)).map(t => {
    const y = Number(t.getAttribute('y'));
    const bars = Array.from(svg.querySelectorAll('rect')).filter(r => Number(r.getAttribute('y')) === y - 11);
    const step = texts.find(s => Number(s.getAttribute('y')) === y && / ms$/.test(s.textContent));
    return {label: t.textContent, labelBox: box(t), bars: bars.map(box),
            parts: bars.map(r => Number(r.querySelector('title').textContent.match(/([\\d.]+) ms$/)[1])),
            step: Number(step.textContent.replace(' ms', '')), stepBox: box(step)};
  }),
};
"""


def overlaps(a, b):
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def check(page, plans):
    failed = []
    legend = page["legend"]
    if len(legend) != 6:
        failed.append(f"the legend has {len(legend)} entries, not 6")
    for a, b in zip(legend, legend[1:]):
        if a["text"][2] > b["swatch"][0]:
            failed.append(f"legend '{a['name']}' runs into '{b['name']}' ({a['text'][2]:.1f} > {b['swatch'][0]:.1f})")
    if legend and legend[-1]["text"][2] > page["svg"][2]:
        failed.append("the legend runs out of the plot")
    rows = page["rows"]
    if len(rows) != plans:
        failed.append(f"{len(rows)} plans drawn, not {plans}")
    # Fastest first, a compressed plan's step counted 5 % longer (--compression-min-gain):
    # a label names its compressor after the bucket size (a plan without one averages nothing).
    ranking = [r["step"] * (1.05 if re.search(r"bucket \S+ (?!none )", r["label"]) else 1.0) for r in rows]
    if any(a > b + 0.002 for a, b in zip(ranking, ranking[1:])):  # steps shown to 0.001 ms
        failed.append(f"the plans are not fastest first: {[r['label'] + ' ' + str(r['step']) for r in rows]}")
    # The slowest plan's bar spans the plot's bar area; the others in proportion.
    widest = max((r["step"] for r in rows), default=0)
    longest = max((max(b[2] for b in r["bars"]) - min(b[0] for b in r["bars"]) for r in rows if r["bars"]), default=0)
    for r in rows:
        if not r["bars"]:
            failed.append(f"{r['label']}: no bar")
            continue
        start, end = min(b[0] for b in r["bars"]), max(b[2] for b in r["bars"])
        if r["labelBox"][2] > start:
            failed.append(f"{r['label']}: the label ({r['labelBox'][2]:.1f}) runs into its bar ({start:.1f})")
        if r["stepBox"][2] > page["svg"][2]:
            failed.append(f"{r['label']}: its step time runs out of the plot")
        if abs(sum(r["parts"]) - r["step"]) > 0.002 * len(r["parts"]) + 0.001:
            failed.append(f"{r['label']}: parts {r['parts']} do not add up to {r['step']} ms")
        want = longest * r["step"] / widest
        if abs((end - start) - want) > 1.5:
            failed.append(f"{r['label']}: bar {end - start:.1f} px, expected {want:.1f} for {r['step']} ms")
    return failed


def main():
    plan, mlp, screenshot = sys.argv[1:4]
    headless_chromium.require()
    plans = 8
    with tempfile.TemporaryDirectory() as tmp:
        model, report = os.path.join(tmp, "mlp.json"), os.path.join(tmp, "report.html")
        subprocess.run([mlp, "--describe-model", model, "--blocks", "3", "--hidden", "512"], check=True,
                       stdout=subprocess.DEVNULL)
        # Compressors and no overlap among the plans: the longest labels there are.
        subprocess.run([plan, "--model", model, "--global-batch", "256", "--hosts", "2", "--ranks-per-host", "4",
                        "--cores", "2", "--gflops", "50", "--elementwise-GBps", "60", "--compression", "topk,sign",
                        "--overlap", "off", "--top", str(plans), "--html", report], check=True,
                       stdout=subprocess.DEVNULL)
        with headless_chromium.opened(1100, 700) as browser:
            browser.get("file://" + report)
            page = browser.execute_script(SNAPSHOT)
            browser.save_screenshot(screenshot)
    failed = check(page, plans)
    print(f"{len(page['rows'])} plans drawn, legend {[l['name'] for l in page['legend']]}; screenshot: {screenshot}")
    for f in failed:
        print("FAILED:", f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
