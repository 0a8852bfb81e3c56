#!/usr/bin/env python3
"""The audit console in a real browser: headless Chromium, driven by Selenium through
chromedriver, against a running `onboard serve`.

Run by Tests/OnboardCLITests/ConsoleBrowserTests.swift, which builds the fleet (device stores
made with the CLI and synced with `onboard sync`) and passes a JSON file: the server's URL, the
tokens, the scenario (every attempt of every user, by device and seq), and where screenshots and
downloads go. Each check prints `ok NAME`; the first failure prints `FAIL NAME: why`, saves a
screenshot and the browser's log next to the downloads, and exits 1. Every wait is bounded.
"""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

# How long one step may wait for the page: far above what a quiet machine needs (well under a
# second), so only a page that never gets there fails.
STEP_SECONDS = 15
# The live tail: the server holds a poll up to 25 s and answers as soon as an attempt arrives.
TAIL_SECONDS = 30
# After errors the tail retries after 1, 2, 4, 8 … s: a few retries must fit.
RECONNECT_SECONDS = 45
# Page loads and scripts the driver waits for.
DRIVER_TIMEOUT_SECONDS = 30
# The added latency of the loading check: longer than its two screenshots take.
LOADING_LATENCY_MS = 4000
DESKTOP = (1280, 800)
PHONE = (390, 844)
CSV_HEADER = ["at", "device", "seq", "user", "factor", "method", "outcome", "reason", "kind"]

# Injected before any page script (CDP runs it whatever the CSP says): records every alert,
# confirm and prompt, every CSP violation, script errors, and every element that ever appears
# with an event-handler attribute or as an <img>/<script> — what an injected name would make.
WATCH = r"""
(() => {
  const report = { id: String(Math.random()), url: location.href, alerts: [], violations: [], errors: [], hostile: [] };
  Object.defineProperty(window, "__console_test", { value: report });
  for (const name of ["alert", "confirm", "prompt"]) {
    window[name] = (message) => { report.alerts.push(name + ": " + String(message)); return null; };
  }
  document.addEventListener("securitypolicyviolation",
    (event) => report.violations.push(event.violatedDirective + " " + event.blockedURI + " " + (event.sample || "")));
  window.addEventListener("error", (event) => report.errors.push(String(event.message)));
  window.addEventListener("unhandledrejection", (event) => report.errors.push("unhandled: " + String(event.reason)));
  const inspect = (node) => {
    if (node.nodeType !== 1) return;
    for (const element of [node, ...node.querySelectorAll("*")]) {
      const tag = element.tagName.toLowerCase();
      const handlers = [...element.attributes].filter((attribute) => attribute.name.startsWith("on"));
      if (tag === "img" || tag === "script" && element.src.indexOf("/console/") < 0 || handlers.length) {
        report.hostile.push(element.outerHTML.slice(0, 200));
      }
    }
  };
  new MutationObserver((mutations) => {
    for (const mutation of mutations) for (const node of mutation.addedNodes) inspect(node);
  }).observe(document, { childList: true, subtree: true });
})();
"""


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


class Console:
    def __init__(self, config):
        self.config = config
        self.url = config["url"]
        self.downloads = config["downloads"]
        self.shots = config["screenshots"]
        os.makedirs(self.downloads, exist_ok=True)
        os.makedirs(self.shots, exist_ok=True)
        options = webdriver.ChromeOptions()
        options.binary_location = config["chromium"]
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--disable-extensions", "--disable-background-networking",
                         "--disable-sync", "--disable-default-apps", "--mute-audio", "--lang=en-US",
                         f"--user-data-dir={config['profile']}", f"--window-size={DESKTOP[0]},{DESKTOP[1]}"]:
            options.add_argument(argument)
        options.add_experimental_option("prefs", {
            "download.default_directory": self.downloads, "download.prompt_for_download": False,
        })
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(config["chromedriver"]), options=options)
        self.driver.set_page_load_timeout(DRIVER_TIMEOUT_SECONDS)
        self.driver.set_script_timeout(DRIVER_TIMEOUT_SECONDS)
        self.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
        self.cdp("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": self.downloads})
        self.cdp("Network.enable", {})
        self.size(DESKTOP)
        self.logs = []
        # Each document's report (the injected watcher starts afresh on every page load), by id.
        self.reports = {}
        self.loads = 0

    def cdp(self, command, parameters):
        return self.driver.execute_cdp_cmd(command, parameters)

    def quit(self):
        try:
            self.driver.quit()
        except Exception:  # the browser may be gone already
            pass

    # ---- pages and waits ----

    def open(self, query=""):
        self.get(self.url + "/console/" + query)

    def get(self, url):
        self.gather()
        self.driver.get(url)
        self.loads += 1
        self.loaded()

    def reload(self):
        self.gather()
        self.driver.refresh()
        self.loads += 1
        self.loaded()

    def back(self):
        self.gather()
        self.driver.back()

    def loaded(self):
        self.wait(lambda: self.js("return document.readyState") == "complete", "the page to load")

    def gather(self):
        """Keeps the current document's report before the page goes (see WATCH)."""
        try:
            report = self.report()
        except WebDriverException:
            return
        if report:
            self.reports[report["id"]] = report

    def everything(self, name):
        """`name` (alerts, violations, errors, hostile) of every document so far."""
        self.gather()
        return [item for report in self.reports.values() for item in report[name]]

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def wait(self, condition, what, seconds=STEP_SECONDS):
        try:
            return WebDriverWait(self.driver, seconds, poll_frequency=0.1).until(lambda _: condition())
        except TimeoutException:
            raise CheckFailed(f"waited {seconds} s for {what}") from None

    def element(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def elements(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def visible(self, css):
        return [element for element in self.elements(css) if element.is_displayed()]

    def text(self, css):
        return self.element(css).text

    def query(self):
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.driver.current_url).query)

    def settled(self, status_css):
        """The status line of a view has left its loading state."""
        return self.js("const s = document.querySelector(arguments[0]); return s && s.dataset.kind !== 'loading'", status_css)

    def wait_timeline(self):
        self.wait(lambda: self.settled("#timeline-status") and (self.elements("#timeline li")
                                                                or self.element("#timeline-status").is_displayed()),
                  "the timeline to load")

    def attempts(self):
        """The visible attempt rows: (at, device, seq, outcome, text)."""
        return self.js("""
            return [...document.querySelectorAll('#timeline li[data-type=attempt]:not([hidden])')].map((li) => {
              const where = li.querySelector('.where').textContent.split(' · seq ');
              return [li.querySelector('time').getAttribute('datetime'), where[0], Number(where[1]),
                      li.querySelector('.outcome').textContent, li.textContent];
            });""")

    def size(self, size):
        width, height = size
        self.cdp("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})

    def screenshot(self, name, scroll_to=None):
        """`name`-desktop.png and `name`-phone.png of the page as it is, scrolled to `scroll_to`."""
        for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
            self.size(size)
            time.sleep(0.3)
            if scroll_to:
                self.js("document.querySelector(arguments[0]).scrollIntoView({block: 'start'})", scroll_to)
            else:
                self.js("window.scrollTo(0, 0)")
            self.js("document.activeElement && document.activeElement.blur && document.activeElement.blur()")
            time.sleep(0.2)
            path = os.path.join(self.shots, f"{name}-{label}.png")
            expect(self.driver.save_screenshot(path), f"could not save {path}")
            with open(path, "rb") as png:
                header = png.read(24)
            width = int.from_bytes(header[16:20], "big")
            height = int.from_bytes(header[20:24], "big")
            expect(header[:8] == b"\x89PNG\r\n\x1a\n" and (width, height) == size, f"{path} is {width}×{height}, not {size}")
        self.size(DESKTOP)
        self.js("window.scrollTo(0, 0)")

    def report(self):
        return self.js("return window.__console_test")

    def collect_logs(self):
        try:
            self.logs.extend(self.driver.get_log("browser"))
        except WebDriverException:
            pass

    # ---- actions ----

    def sign_in(self, token):
        field = self.element("#token")
        field.clear()
        field.send_keys(token)
        self.element("#signin-form button").click()

    def wait_signed_in(self):
        self.wait(lambda: not self.element("#who").get_attribute("hidden"), "the sign-in to finish")

    def search(self, text):
        field = self.element("#search")
        field.clear()
        field.send_keys(text, Keys.ENTER)
        self.wait(lambda: self.settled("#search-status") and self.element("#search-status").text, f"the search for {text!r}")

    def results(self):
        return [button.text for button in self.elements("#search-results button")]

    def open_user(self, user):
        self.open("?" + urllib.parse.urlencode({"user": user}))
        self.wait_timeline()

    def api(self, path, token, method="GET"):
        request = urllib.request.Request(self.url + path, method=method, headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(request, timeout=STEP_SECONDS) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, None

    def sync_attempt(self, reason):
        """Records a failed sign-in of the tail user on the tail device's store and syncs it, as the CLI does."""
        tail = self.config["tail"]
        event = {"type": "sign_in_failed", "user": tail["user"], "method": "password", "reason": reason}
        recorded = subprocess.run([self.config["onboard"], "record", "--store", tail["store"], json.dumps(event)],
                                  capture_output=True, text=True, timeout=STEP_SECONDS)
        expect(recorded.returncode == 0, f"onboard record: {recorded.stderr}")
        stored = json.loads(recorded.stdout)
        synced = subprocess.run([self.config["onboard"], "sync", "--store", tail["store"], "--server", self.url,
                                 "--token", tail["token"]], capture_output=True, text=True, timeout=STEP_SECONDS)
        expect(synced.returncode == 0, f"onboard sync: {synced.stderr}")
        return stored

    def download(self, name):
        path = os.path.join(self.downloads, name)
        self.wait(lambda: os.path.exists(path) and not os.path.exists(path + ".crdownload"), f"the download {name}")
        with open(path, encoding="utf-8") as file:
            return file.read()


def in_range(attempt, since, until):
    return (since is None or attempt["at"] >= since) and (until is None or attempt["at"] < until)


def key(attempt):
    return (attempt["at"], attempt["device"], attempt["seq"])


# ---- the checks, in order (each leaves the page where the next one starts) ----

def sign_in_refuses_bad_tokens(c):
    c.open()
    c.wait(lambda: c.element("#signin").is_displayed(), "the sign-in form")
    expect(not c.element("#view-timeline").is_displayed(), "the timeline shows before sign-in")
    c.sign_in("obt_" + "0" * 64)
    c.wait(lambda: c.element("#signin-error").is_displayed(), "the error for an unknown token")
    expect("does not know" in c.text("#signin-error"), f"unknown token: {c.text('#signin-error')!r}")
    c.sign_in(c.config["tokens"]["device"])
    c.wait(lambda: "device token" in c.text("#signin-error"), "the error for a device token")
    expect(c.js("return sessionStorage.length") == 0, "a refused token was kept in sessionStorage")
    c.screenshot("signin")


def keyboard_sign_in(c):
    c.open()
    c.wait(lambda: c.element("#signin").is_displayed(), "the sign-in form")
    # From the top of the page, Tab until the token field has the focus (the skip link comes first).
    for _ in range(10):
        if c.js("return document.activeElement.id") == "token":
            break
        ActionChains(c.driver).send_keys(Keys.TAB).perform()
    expect(c.js("return document.activeElement.id") == "token", "Tab never reached the token field")
    ActionChains(c.driver).send_keys(c.config["tokens"]["auditor"], Keys.ENTER).perform()
    c.wait_signed_in()
    expect(c.text("#role") == "auditor", f"role shown: {c.text('#role')!r}")
    token = c.config["tokens"]["auditor"]
    stored = c.js("return Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k))")
    expect(stored == [token], f"sessionStorage holds {len(stored)} items, not the token alone")
    expect(c.js("return localStorage.length") == 0, "something went to localStorage")
    expect(c.js("return document.cookie") == "", "the page set a cookie")
    expect(token not in c.driver.current_url, "the token is in the URL")


def auditor_sees_lockout(c):
    c.search("bob")
    expect(any("Bob Martin" in text for text in c.results()), f"bob not found: {c.results()}")
    c.elements("#search-results button")[0].click()
    c.wait(lambda: c.query().get("user") == ["bob"], "bob's timeline in the URL")
    c.wait(lambda: c.settled("#lockout-status") and c.elements("#lockout-body tr"), "bob's lockout")
    row = c.text("#lockout-body tbody tr")
    expect("password" in row and "locked until" in row and "5" in row, f"bob's lockout row: {row!r}")
    # The server runs the default preset; docs/lockout.md § Presets gives its tiers.
    c.wait(lambda: c.settled("#lockout-policy") and "mediawiki" in c.text("#lockout-policy"), "the server's policy")
    policy = c.text("#lockout-policy")
    expect("password: 5 failures per 5 minutes, 150 per 2 days" in policy
           and "second factor: 10 failures per 1 minute, 20 per 10 minutes" in policy, f"the policy line: {policy!r}")
    expect(not c.element("#clear-form").is_displayed(), "an auditor is offered the clear action")


def sign_out_forgets(c):
    c.element("#sign-out").click()
    c.wait(lambda: c.element("#signin").is_displayed(), "the sign-in form after sign-out")
    expect(c.js("return sessionStorage.length") == 0, "the token outlived the sign-out")
    expect("Bob Martin" not in c.text("body") and not c.elements("#timeline li"), "bob's data stayed on the page")
    c.reload()
    c.wait(lambda: c.element("#signin").is_displayed(), "the sign-in form after a reload")
    expect("user=bob" in c.driver.current_url, "the view's URL was lost")


def admin_clears_lockout(c):
    # Signed out on bob's URL: signing in shows his view again (the URL is the view).
    c.sign_in(c.config["tokens"]["admin"])
    c.wait_signed_in()
    expect(c.text("#role") == "admin", f"role shown: {c.text('#role')!r}")
    c.wait(lambda: c.settled("#lockout-status") and c.elements("#lockout-body tr"), "bob's lockout")
    expect("locked until" in c.text("#lockout-body"), f"bob is not locked: {c.text('#lockout-body')!r}")
    expect(c.element("#clear-form").is_displayed(), "an admin is not offered the clear action")
    c.screenshot("lockout", "#lockout")
    c.element("#clear-form button[type=submit]").click()
    c.wait(lambda: c.element("#clear-error").is_displayed(), "the complaint about a missing reason")
    reason = "Identity confirmed by phone (ticket 4711)"
    Select(c.element("#clear-factor")).select_by_value("password")
    c.element("#clear-reason").send_keys(reason)
    c.element("#clear-form button[type=submit]").click()
    c.wait(lambda: "Lockout cleared" in c.text("#clear-status"), "the clear to be confirmed")
    c.wait(lambda: c.settled("#lockout-status") and "not locked out" in c.text("#lockout-status"), "the lockout to read cleared")
    actions = c.visible("#timeline li[data-type=action]")
    expect(len(actions) == 1 and reason in actions[0].text and "lockout cleared" in actions[0].text,
           f"the action in the timeline: {[a.text for a in actions]}")
    status, entries = c.api("/v1/users/bob/lockout", c.config["tokens"]["auditor"])
    expect(status == 200 and all(entry["locked_until"] is None and not entry["permanent"] for entry in entries),
           f"the server still locks bob: {status} {entries}")
    # From the server, after a reload: the audited action is part of bob's history.
    c.reload()
    c.wait_signed_in()
    c.wait_timeline()
    c.wait(lambda: any(reason in row.text for row in c.visible("#timeline li[data-type=action]")),
           "the action in bob's timeline after a reload")


def search_folds(c):
    jose = c.config["users"]["josé"]
    c.open("?view=timeline")
    c.wait_signed_in()
    for text in ["jose", "JOSÉ", "alv", "Álvarez"]:
        c.search(text)
        expect(any(jose["display_name"] in result and "josé" in result for result in c.results()),
               f"search {text!r} did not find José: {c.results()}")
    c.search("jose")
    c.elements("#search-results button")[0].click()
    c.wait(lambda: c.query().get("user") == ["josé"], "josé's timeline in the URL")
    c.wait_timeline()
    c.wait(lambda: jose["display_name"] in c.text("#subject-detail"), "the display name over the timeline")


def timeline_pages(c):
    jose = c.config["users"]["josé"]
    c.wait(lambda: len(c.attempts()) == 50, f"a first page of 50 attempts (got {len(c.attempts())})")
    first = c.attempts()
    times = [row[0] for row in first]
    expect(times == sorted(times, reverse=True), "the first page is not newest first")
    newest = sorted(jose["attempts"], key=key, reverse=True)
    expect([(row[0], row[1], row[2]) for row in first] == [key(a) for a in newest[:50]],
           "the first page is not josé's 50 newest attempts")
    expect(c.visible("#timeline li[data-type=session]"), "no session on the first page")
    expect(c.element("#load-more").is_displayed(), "no Load more with 80 attempts")
    c.element("#load-more").click()
    c.wait(lambda: len(c.attempts()) == len(jose["attempts"]), f"all {len(jose['attempts'])} attempts after Load more")
    every = [(row[0], row[1], row[2]) for row in c.attempts()]
    expect(every == [key(a) for a in newest], "the pages together are not josé's attempts, newest first, each once")
    expect(not c.element("#load-more").is_displayed(), "Load more after the last page")
    c.screenshot("timeline")
    c.screenshot("events", "#events-title")


def filters(c):
    jose = c.config["users"]["josé"]
    c.element("#filters-panel summary").click()
    c.element("#filters-form input[name=outcome][value=failed]").click()
    Select(c.element("#f-device")).select_by_value("phone-2")
    c.element("#filters-form button[type=submit]").click()
    c.wait(lambda: c.query().get("outcome") == ["failed"] and c.query().get("device") == ["phone-2"], "the filters in the URL")
    c.wait_timeline()
    chips = [chip.text for chip in c.elements("#chips .chip")]
    expect(any("device: phone-2" in chip for chip in chips) and any("outcome: failed" in chip for chip in chips), f"chips: {chips}")
    expected = [key(a) for a in sorted(jose["attempts"], key=key, reverse=True) if a["outcome"] == "failed" and a["device"] == "phone-2"]
    c.wait(lambda: [(r[0], r[1], r[2]) for r in c.attempts()] == expected, f"the {len(expected)} failed attempts on phone-2")
    c.screenshot("filters", "#filters-panel")
    # The view is its URL: opened afresh, the same filters and rows.
    c.get(c.driver.current_url)
    c.wait_signed_in()
    c.wait_timeline()
    c.wait(lambda: [(r[0], r[1], r[2]) for r in c.attempts()] == expected, "the same rows from the shared URL")
    # A chip removes its filter.
    next(chip for chip in c.elements("#chips .chip") if "device: phone-2" in chip.text).click()
    c.wait(lambda: "device" not in c.query(), "the device filter to leave the URL")
    c.wait_timeline()
    failed = [key(a) for a in sorted(jose["attempts"], key=key, reverse=True) if a["outcome"] == "failed"]
    c.wait(lambda: [(r[0], r[1], r[2]) for r in c.attempts()] == failed, f"the {len(failed)} failed attempts on both devices")
    # Method, and the event type (a view-only filter: sessions hidden, attempts kept).
    if not c.element("#filters-panel").get_attribute("open"):
        c.element("#filters-panel summary").click()
    c.element("#filters-form input[name=method][value=passcode]").click()
    c.element("#filters-form input[name=type][value=attempt]").click()
    c.element("#filters-form button[type=submit]").click()
    c.wait(lambda: c.query().get("method") == ["passcode"] and c.query().get("type") == ["attempt"], "method and type in the URL")
    c.wait_timeline()
    passcode = [key(a) for a in sorted(jose["attempts"], key=key, reverse=True)
                if a["outcome"] == "failed" and a["method"] == "passcode"]
    c.wait(lambda: [(r[0], r[1], r[2]) for r in c.attempts()] == passcode, "the failed passcode attempts")
    expect(not c.visible("#timeline li[data-type=session]"), "sessions show with only attempts chosen")
    c.element("#filters-reset").click()
    c.wait(lambda: set(c.query()) == {"user"}, "Clear all to leave only the user in the URL")
    c.wait_timeline()


def chart_drag(c):
    jose = c.config["users"]["josé"]
    c.wait(lambda: c.settled("#chart-status") and c.elements("#chart svg .bar"), "the chart's bars")
    heights = c.js("return [...document.querySelectorAll('#chart .bucket')].map((g) => g.querySelectorAll('.bar').length)")
    expect(sum(1 for count in heights if count) >= 10, f"the chart has few bars: {heights}")
    surface = c.element("#chart .surface")
    width = surface.size["width"]
    # Drag from a quarter to a little past the middle of the plot.
    ActionChains(c.driver).move_to_element_with_offset(surface, int(-width * 0.25), 0).click_and_hold() \
        .move_by_offset(int(width * 0.15), 0).move_by_offset(int(width * 0.2), 0).release().perform()
    c.wait(lambda: "since" in c.query() and "until" in c.query(), "the drag's range in the URL")
    since, until = c.query()["since"][0], c.query()["until"][0]
    c.wait_timeline()
    chips = " ".join(chip.text for chip in c.elements("#chips .chip"))
    expect("from " in chips and "until " in chips, f"no time chips: {chips}")
    expected = [key(a) for a in sorted(jose["attempts"], key=key, reverse=True) if in_range(a, since, until)]
    expect(0 < len(expected) < len(jose["attempts"]), f"the range {since}…{until} holds {len(expected)} attempts")
    c.wait(lambda: [(r[0], r[1], r[2]) for r in c.attempts()[:50]] == expected[:50], f"the {len(expected)} attempts of {since}…{until}")
    c.wait(lambda: c.settled("#chart-status") and c.elements("#chart svg .bar"), "the zoomed chart")
    label = c.element("#chart svg").get_attribute("aria-label")
    expect(since in label, f"the chart does not start at the range: {label}")
    c.screenshot("chart", "#chart-title")
    c.state_after_drag = (since, until)


def chart_keyboard(c):
    since, until = c.state_after_drag
    chart = c.element("#chart svg")
    c.js("arguments[0].focus()", chart)
    ActionChains(c.driver).send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT).key_down(Keys.SHIFT) \
        .send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT).key_up(Keys.SHIFT).send_keys(Keys.ENTER).perform()
    c.wait(lambda: c.query().get("since", [since])[0] != since, "the keyboard zoom's range in the URL")
    new_since, new_until = c.query()["since"][0], c.query()["until"][0]
    expect(since < new_since < new_until < until, f"the keyboard range {new_since}…{new_until} is not inside {since}…{until}")
    c.wait_timeline()
    c.element("#chart-reset").click()
    c.wait(lambda: "since" not in c.query() and "until" not in c.query(), "Show all times to drop the range")
    c.wait_timeline()


def export(c):
    jose = c.config["users"]["josé"]
    c.open("?" + urllib.parse.urlencode({"user": "josé", "outcome": "failed"}))
    c.wait_timeline()
    failed = sorted((a for a in jose["attempts"] if a["outcome"] == "failed"), key=key)
    Select(c.element("#export-format")).select_by_value("csv")
    c.element("#export-form button").click()
    text = c.download("josé-history.csv")
    c.wait(lambda: "Saved josé-history.csv" in c.text("#export-status"), "the export's confirmation")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    expect(rows[0] == CSV_HEADER, f"CSV header: {rows[0]}")
    records = [dict(zip(rows[0], row)) for row in rows[1:]]
    attempts = [r for r in records if r["kind"] == "attempt"]
    expect([(r["at"], r["device"], int(r["seq"])) for r in attempts] == [key(a) for a in failed],
           f"the CSV's attempts are not josé's {len(failed)} failed ones, oldest first")
    expect(all(r["outcome"] == "failed" and r["user"] == "josé" for r in attempts), "a CSV row is not a failed attempt of josé")
    Select(c.element("#export-format")).select_by_value("jsonl")
    c.element("#export-form button").click()
    lines = [json.loads(line) for line in c.download("josé-history.jsonl").splitlines() if line]
    attempts = [line for line in lines if "action" not in line]
    expect([(a["at"], a["device"], a["seq"]) for a in attempts] == [key(a) for a in failed], "the JSONL's attempts")
    Select(c.element("#export-format")).select_by_value("ocsf")
    c.element("#export-form button").click()
    events = [json.loads(line) for line in c.download("josé-history.json").splitlines() if line]
    expect(len(events) == len(failed) and all(event.get("class_uid") == 3002 for event in events),
           f"the OCSF file has {len(events)} events, not {len(failed)} Authentication (3002) ones")


def live_tail(c):
    # The tail continues after the newest attempt shown with a cursor the page makes: it must be
    # the very cursor the server issues for that attempt.
    status, page = c.api("/v1/users/" + urllib.parse.quote("josé") + "/history?limit=1", c.config["tokens"]["auditor"])
    expect(status == 200 and page["next_cursor"], f"history answered {status}")
    made = c.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/console/timeline.js').then((m) => done(m.cursorOf(arguments[0])), (e) => done('error: ' + e));",
        page["attempts"][0])
    expect(made == page["next_cursor"], f"the page's cursor {made!r} is not the server's {page['next_cursor']!r}")
    c.open_user("josé")
    c.wait(lambda: c.element("#live-status").get_attribute("data-kind") == "live", "the live tail to start")
    before = len(c.attempts())
    # No wait for the first poll: it asks for what came after the newest attempt shown, so an
    # attempt synced before it reaches the server is in its answer all the same.
    stored = c.sync_attempt("invalid_password")
    c.wait(lambda: c.attempts() and c.attempts()[0][0] == stored["at"], "the synced attempt at the top", TAIL_SECONDS)
    top = c.attempts()[0]
    expect(top[1] == c.config["tail"]["device"] and top[3] == "failed" and len(c.attempts()) == before + 1,
           f"the tail's row: {top}")
    expect(c.visible("#timeline li.fresh"), "the new row is not marked new")
    # Cut the page off from the history endpoint: the tail says so and keeps trying.
    c.cdp("Network.setBlockedURLs", {"urls": ["*/history?*"]})
    c.sync_attempt("invalid_password")  # ends the poll in flight; the next ones fail
    c.wait(lambda: c.element("#live-status").get_attribute("data-kind") == "error", "the tail to report the lost server", TAIL_SECONDS)
    expect("trying again" in c.text("#live-status"), f"the tail's error: {c.text('#live-status')!r}")
    c.screenshot("live-error", "#events-title")
    c.cdp("Network.setBlockedURLs", {"urls": []})
    stored = c.sync_attempt("invalid_password")
    c.wait(lambda: any(row[0] == stored["at"] for row in c.attempts()), "the tail to reconnect and show the attempt", RECONNECT_SECONDS)
    c.wait(lambda: c.element("#live-status").get_attribute("data-kind") == "live", "the tail to read live again")
    rows = [(r[0], r[1], r[2]) for r in c.attempts()]
    expect(len(rows) == len(set(rows)), "an attempt shows twice after the reconnect")
    expect([r[0] for r in rows] == sorted((r[0] for r in rows), reverse=True), "the tail broke the newest-first order")
    c.element("#live").click()
    c.wait(lambda: "off" in c.text("#live-status"), "the tail to stop when switched off")


def hostile_names(c):
    c.open("?view=timeline")
    c.wait_signed_in()
    c.search("mallory")
    name = "<img src=x onerror=alert(1)>"
    expect(any(name in result for result in c.results()), f"the name does not show as text: {c.results()}")
    c.screenshot("hostile-name")
    c.elements("#search-results button")[0].click()
    c.wait_timeline()
    c.wait(lambda: c.text("#subject-detail") == name, "the display name as text over the timeline")
    hostile = "<svg onload=alert(2)>"
    c.open_user(hostile)
    c.wait(lambda: hostile in c.text("#subject-title"), "the hostile user id as text")
    c.wait(lambda: "<script>alert(3)</script>" in c.text("#subject-detail"), "the hostile display name as text")
    c.open("?" + urllib.parse.urlencode({"device": "kiosk-7"}))
    c.wait_timeline()
    c.wait(lambda: c.elements("#timeline a.user-cell"), "kiosk-7's timeline with its users")
    shown = [link.text for link in c.elements("#timeline a.user-cell")]
    expect(hostile in shown and "mallory" in shown, f"the device's users as links: {sorted(set(shown))}")
    ran = c.everything("alerts") + c.everything("hostile")
    expect(not ran, f"something ran or was parsed from a name: {ran}")
    expect(c.js("return document.querySelectorAll('img, script:not([src]), [onerror], [onload]').length") == 0,
           "an img or inline script is in the page")
    try:
        alert = c.driver.switch_to.alert
        raise CheckFailed(f"an alert is open: {alert.text}")
    except NoAlertPresentException:
        pass


def erased_user(c):
    carol = c.config["users"]["carol"]
    # On kiosk-7's timeline (from the previous check): carol's attempts read as an erased pseudonym.
    c.wait(lambda: c.elements("#timeline .badge.erased"), "erased users on kiosk-7's timeline")
    erased = [row for row in c.visible("#timeline li") if row.find_elements(By.CSS_SELECTOR, ".badge.erased")]
    expect(len(erased) == len(carol["attempts"]), f"{len(erased)} erased rows, carol had {len(carol['attempts'])} attempts")
    expect(all("~" in row.text for row in erased), "an erased row does not show the pseudonym")
    expect("carol" not in c.text("#timeline").lower(), "carol's name is on the device's timeline")
    expect(not any(row.find_elements(By.CSS_SELECTOR, "a") for row in erased), "an erased user is a link")
    c.screenshot("device-timeline", "#timeline li:has(.badge.erased)")
    c.search("carol")
    expect(not any("Carol" in result for result in c.results()), f"the search still finds carol: {c.results()}")


def devices(c):
    c.open("?view=devices")
    c.wait(lambda: c.settled("#devices-status") and c.elements("#devices-body tr"), "the devices")
    c.wait(lambda: "checking" not in c.text("#devices-body"), "every device's chain audit")
    rows = {row.get_attribute("data-device"): row for row in c.elements("#devices-body tr")}
    spare = c.config["spare"]
    expect(set(rows) == {d["device"] for d in c.config["devices"]} | {spare["device"]}, f"devices listed: {sorted(rows)}")
    for device in c.config["devices"]:
        cells = rows[device["device"]].find_elements(By.CSS_SELECTOR, "td")
        text = rows[device["device"]].text
        # The live tail's check synced more attempts from its device.
        synced = device["acknowledged_seq"]
        shown = int(cells[1].text)
        expect(shown == synced or device["device"] == c.config["tail"]["device"] and shown > synced,
               f"{device['device']} shows acknowledged seq {shown}, synced {synced}")
        expect("never" not in cells[0].text, f"{device['device']} shows no sync")
        expect("chain ok" in text, f"{device['device']}'s audit: {text!r}")
        if device["signed"]:
            expect("signed at the acknowledged seq" in text, f"{device['device']}'s signed head: {text!r}")
    spare_row = rows[spare["device"]]
    expect("never" in spare_row.find_elements(By.CSS_SELECTOR, "td")[0].text, "the spare device shows a sync")
    c.screenshot("devices")
    tokens = spare_row.find_elements(By.CSS_SELECTOR, ".tokens li")
    expect(len(tokens) == 2, f"the spare device lists {len(tokens)} tokens, not 2")
    tokens[0].find_element(By.CSS_SELECTOR, "button").click()
    confirm = c.wait(lambda: next(iter(spare_row.find_elements(By.CSS_SELECTOR, "button.danger")), None), "the confirm button")
    expect(c.js("return document.activeElement") == confirm, "the confirm button does not take the focus")
    confirm.click()
    c.wait(lambda: "revoked" in spare_row.text, "the token to read revoked")
    answers = [c.api(f"/v1/devices/{spare['device']}/cursor", token)[0] for token in spare["tokens"]]
    expect(sorted(answers) == [200, 401], f"after one revocation the spare tokens answer {answers}")


def states(c):
    # Empty: a search that finds nobody; a user with no records.
    c.open("?view=timeline")
    c.wait_signed_in()
    expect(c.element("#subject-empty").is_displayed(), "no empty state without a subject")
    c.search("zzz-nobody")
    expect("No user found" in c.text("#search-status"), f"empty search: {c.text('#search-status')!r}")
    c.open_user("nobody-at-all")
    c.wait(lambda: "No events match" in c.text("#timeline-status"), "the empty timeline")
    c.wait(lambda: c.settled("#chart-status") and "No attempts" in c.text("#chart-status"), "the empty chart")
    c.wait(lambda: c.settled("#lockout-status") and "not locked out" in c.text("#lockout-status"), "the empty lockout")
    # Error: a device that is not enrolled; a time that is not one.
    c.open("?" + urllib.parse.urlencode({"device": "nowhere"}))
    c.wait(lambda: c.settled("#timeline-status") and c.element("#timeline-status").get_attribute("data-kind") == "error",
           "the timeline's error")
    expect("not enrolled" in c.text("#timeline-status"), f"the error: {c.text('#timeline-status')!r}")
    c.wait(lambda: c.element("#chart-status").get_attribute("data-kind") == "error", "the chart's error")
    c.screenshot("error")
    c.open_user("josé")
    c.element("#filters-panel summary").click()
    c.element("#f-since").send_keys("yesterday")
    c.element("#filters-form button[type=submit]").click()
    c.wait(lambda: c.element("#filters-error").is_displayed(), "the complaint about the time")
    expect("yesterday" in c.text("#filters-error") and "since" not in c.query(), "a bad time went through")
    # Loading: on a slow network every view says it is loading until its answer comes. The
    # page is loaded first at full speed; going back then renders in the page (no reload).
    c.open_user("josé")
    c.element("#nav-devices").click()
    c.wait(lambda: c.settled("#devices-status") and c.elements("#devices-body tr"), "the devices")
    c.cdp("Network.emulateNetworkConditions", {"offline": False, "latency": LOADING_LATENCY_MS,
                                               "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        c.back()
        c.wait(lambda: c.element("#timeline-status").get_attribute("data-kind") == "loading", "the timeline's loading state")
        expect("Loading" in c.text("#chart-status") and "Loading" in c.text("#lockout-status"),
               f"the chart and lockout while loading: {c.text('#chart-status')!r} {c.text('#lockout-status')!r}")
        c.screenshot("loading")
        c.driver.forward()
        c.wait(lambda: c.element("#devices-status").get_attribute("data-kind") == "loading", "the devices' loading state")
    finally:
        c.cdp("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    c.wait(lambda: c.settled("#devices-status"), "the devices after the slow network")


def labels_and_keyboard(c):
    c.open_user("josé")
    c.wait(lambda: c.settled("#chart-status") and c.settled("#lockout-status"), "the view")
    c.element("#filters-panel summary").click()
    unnamed = c.js("""
        const name = (e) => (e.labels && [...e.labels].map((l) => l.textContent).join(' ').trim())
          || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' || e.tagName === 'A' || e.tagName === 'SUMMARY' ? e.textContent.trim() : '');
        return [...document.querySelectorAll('input, select, button, a[href], summary, [tabindex]:not([tabindex="-1"])')]
          .filter((e) => !e.closest('svg') && e.offsetParent !== null && !name(e))
          .map((e) => e.outerHTML.slice(0, 120));""")
    expect(not unnamed, f"controls without a label: {unnamed}")
    expect(c.element("#chart svg").get_attribute("aria-label"), "the chart has no text alternative")
    # Tab from the top: the keyboard reaches every part of the view, in reading order.
    c.js("document.activeElement.blur(); window.scrollTo(0, 0)")
    reached = []
    for _ in range(120):
        ActionChains(c.driver).send_keys(Keys.TAB).perform()
        reached.append(c.js("const e = document.activeElement; return e.id || e.getAttribute('name') || e.getAttribute('class') || e.tagName"))
    for target in ["search", "f-device", "f-since", "chart-svg", "clear-reason", "export-format", "live", "load-more", "sign-out"]:
        expect(target in reached, f"Tab never reaches {target}: {reached}")


def layout(c):
    for query in ["?" + urllib.parse.urlencode({"user": "josé"}), "?view=devices"]:
        c.open(query)
        c.wait(lambda: c.settled("#timeline-status") if "user" in query else c.settled("#devices-status"), "the view")
        c.wait(lambda: "checking" not in c.text("body"), "the audits")
        for size in (DESKTOP, PHONE):
            c.size(size)
            time.sleep(0.3)
            width = c.js("return document.documentElement.scrollWidth")
            expect(width <= size[0], f"{query} at {size[0]} px is {width} px wide (scrolls sideways)")
        c.size(DESKTOP)


def no_errors(c):
    violations = c.everything("violations")
    expect(not violations, f"CSP violations: {violations}")
    errors = c.everything("errors")
    expect(not errors, f"script errors: {errors}")
    expect(len(c.reports) >= c.loads, f"{c.loads} pages were loaded, {len(c.reports)} watched")
    c.collect_logs()
    # The network errors the checks caused (401, 403 and 404 answers, blocked polls) are the
    # server's answers; any other severe entry is the page's own error.
    bad = [entry["message"] for entry in c.logs
           if entry["level"] == "SEVERE" and entry.get("source") not in ("network",)
           and "Failed to load resource" not in entry["message"]]
    expect(not bad, f"the browser logged errors: {bad}")


CHECKS = [
    ("sign-in refuses unknown and device tokens", sign_in_refuses_bad_tokens),
    ("keyboard sign-in keeps the token in sessionStorage only", keyboard_sign_in),
    ("an auditor sees the lockout without the clear action", auditor_sees_lockout),
    ("sign-out forgets the token and the data", sign_out_forgets),
    ("an admin clears a lockout and the action is in the timeline", admin_clears_lockout),
    ("search folds case and diacritics", search_folds),
    ("timeline is newest first and loads more through the cursor", timeline_pages),
    ("filters show as chips and live in the URL", filters),
    ("dragging across the chart zooms into its range", chart_drag),
    ("the chart zooms from the keyboard", chart_keyboard),
    ("export saves the filtered history as CSV, JSONL and OCSF", export),
    ("the live tail shows a synced attempt and reconnects after errors", live_tail),
    ("hostile names render as text and nothing runs", hostile_names),
    ("an erased user shows as erased", erased_user),
    ("devices show sync, heads, audit and tokens; an admin revokes one", devices),
    ("empty, loading and error states", states),
    ("every control has a label and the keyboard reaches them", labels_and_keyboard),
    ("the views fit 1280 and 390 pixels", layout),
    ("no script error and no CSP violation", no_errors),
]


def main():
    # Lead a process group of our own: the test kills the group, so no browser outlives it.
    os.setpgrp()
    with open(sys.argv[1], encoding="utf-8") as file:
        config = json.load(file)
    console = None

    def stop(signum, frame):
        if console:
            console.quit()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    console = Console(config)
    try:
        for name, check in CHECKS:
            started = time.monotonic()
            try:
                check(console)
            except Exception as error:  # a failed expectation, a missing element, a dead browser
                why = str(error) if isinstance(error, CheckFailed) else traceback.format_exc()
                print(f"FAIL {name}: {why}", flush=True)
                try:
                    console.driver.save_screenshot(os.path.join(config["downloads"], "failure.png"))
                    print(f"  page: {console.driver.current_url}\n  report: {console.report()}", flush=True)
                    for css in ["#timeline-status", "#chart-status", "#lockout-status", "#devices-status", "#live-status", "#timeline"]:
                        shown = console.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", css)
                        print(f"  {css}: {shown[:600]!r}", flush=True)
                    console.collect_logs()
                    for entry in console.logs[-20:]:
                        print(f"  log: {entry['level']} {entry['message'][:300]}", flush=True)
                except Exception:
                    pass
                return 1
            print(f"ok {name}\n  took {time.monotonic() - started:.1f} s", flush=True)
            console.collect_logs()
        return 0
    finally:
        console.quit()


if __name__ == "__main__":
    sys.exit(main())
