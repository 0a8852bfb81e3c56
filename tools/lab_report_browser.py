#!/usr/bin/env python3
"""The lab's HTML report (`onboard lab compare|sweep --report`) in a real browser: Debian's
headless Chromium driven by Selenium through chromedriver, as tools/console_browser.py does.

    lab_report_browser.py [--screenshot OUT.png] REPORT.html ...

Opens each report as a file:// URL and checks that the browser logged nothing SEVERE (a script
error, a refused load, a CSP violation), that every inline <svg> rendered with a nonzero size,
and that the page fetched nothing. Prints `ok REPORT: N svgs`, or `FAIL REPORT: why` and exits 1.
With --screenshot, saves the first report's top at 1280×1600 to OUT.png (docs/lab-report.png).

Run by Tests/OnboardCLITests/LabReportBrowserTests.swift and tools/lab-screenshot.sh.
"""

import argparse
import os
import pathlib
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
WINDOW = (1280, 1600)
TIMEOUT_SECONDS = 30

# Every inline SVG's rendered box, and what the page loaded besides itself.
MEASURE = """
const boxes = [...document.querySelectorAll('svg')].map((svg) => {
  const box = svg.getBoundingClientRect();
  return [svg.getAttribute('class') || '', box.width, box.height];
});
const loads = performance.getEntriesByType('resource').map((entry) => entry.name);
return { boxes, loads, scripts: document.scripts.length, title: document.title };
"""


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking", "--disable-sync",
                     "--disable-default-apps", "--mute-audio", "--lang=en-US", "--hide-scrollbars",
                     f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(TIMEOUT_SECONDS)
    driver.set_script_timeout(TIMEOUT_SECONDS)
    # The viewport itself at 1280×1600, whatever the window's decorations take.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
    return driver


def check(driver, report):
    url = pathlib.Path(report).resolve().as_uri()
    driver.get(url)
    measured = driver.execute_script(MEASURE)
    severe = [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    problems = []
    if severe:
        problems.append("SEVERE browser log entries: " + "; ".join(entry.get("message", "") for entry in severe))
    if not measured["boxes"]:
        problems.append("no <svg> in the page")
    for name, width, height in measured["boxes"]:
        if not (width > 0 and height > 0):
            problems.append(f"the svg '{name}' rendered at {width}×{height}")
    if measured["loads"]:
        problems.append("the page loaded " + ", ".join(measured["loads"]))
    if measured["scripts"]:
        problems.append(f"the page has {measured['scripts']} script elements")
    if not measured["title"].startswith("Lockout lab report"):
        problems.append(f"unexpected title {measured['title']!r}")
    return problems, len(measured["boxes"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--screenshot")
    parser.add_argument("reports", nargs="+")
    arguments = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            for number, report in enumerate(arguments.reports):
                problems, svgs = check(driver, report)
                if problems:
                    print(f"FAIL {report}: " + " | ".join(problems), flush=True)
                    failed = True
                else:
                    print(f"ok {report}: {svgs} svgs", flush=True)
                if number == 0 and arguments.screenshot:
                    driver.save_screenshot(arguments.screenshot)
                    print(f"screenshot {arguments.screenshot}", flush=True)
        finally:
            driver.quit()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
