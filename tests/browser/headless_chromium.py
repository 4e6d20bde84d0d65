"""Headless chromium for the tests that read a page in a real browser (selenium and
Debian's chromium-driver), shared so each test states only what it checks.

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "browser"))
    import headless_chromium
    headless_chromium.require()                      # exit 77 (ctest: skipped), saying why
    with headless_chromium.opened(1280, 900) as browser:
        browser.get(url)

The browser keeps its profile and temporary files in a scratch directory of its own,
removed when it closes: left to itself chromium leaves an org.chromium.Chromium.*
directory in /tmp on every start (19 were there after a day of test runs).
"""

import contextlib
import os
import shutil
import sys
import tempfile


def skip(why):
    """ctest's SKIP_RETURN_CODE for these tests: 77, with the reason printed."""
    print("SKIPPED:", why)
    sys.exit(77)


def require():
    """Skips the test (exit 77) unless selenium, chromium and chromedriver are here."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        skip("python3-selenium is not installed")
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        skip("chromium and chromium-driver are not installed")


@contextlib.contextmanager
def opened(width, height):
    """A headless chromium of a window `width` x `height`, quit and its files removed
    on leaving."""
    require()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    with tempfile.TemporaryDirectory(prefix="hostccl-test-chromium-") as scratch:
        options = webdriver.ChromeOptions()
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  f"--window-size={width},{height}", "--user-data-dir=" + os.path.join(scratch, "profile")):
            options.add_argument(a)
        options.binary_location = shutil.which("chromium")
        # chromedriver and chromium inherit it: their temporary files go to the scratch too.
        service = Service(executable_path=shutil.which("chromedriver"), env=dict(os.environ, TMPDIR=scratch))
        browser = webdriver.Chrome(options=options, service=service)
        try:
            yield browser
        finally:
            browser.quit()
