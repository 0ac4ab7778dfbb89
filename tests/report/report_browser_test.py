#!/usr/bin/env python3
"""What a person sees of `torchsweep report`, in a real headless Chromium.

Run by ctest inside `unshare --net` (loopback only: the browser has no
network, so an offline page is proven offline). Four stores:
  - a real `torchsweep run` of the README's main job, examples/cpu-quick.yaml
    (its report is written beside the store by `run` itself);
  - a synthetic 30-night history with one injected step (mlp compiled, 25%
    slower from night 26) and one blip (mlp eager, night 12 only), judged
    against night 25: the step is found and marked, the blip is not, and
    the regression is listed as flagged; then a real coordinator and agent
    on that store rerun it (`torchsweep confirm`, the fixture as runner,
    as slow as the history's jobs say) and the report lists it confirmed;
  - a store with one run per configuration, and one with no sweep at all:
    the page says so instead of failing.
Each page: no console error, the marker set once every chart rendered, as
many SVG charts as the page announces, the expected rows, no horizontal
scrolling at a phone's width (390 px), and a screenshot kept under
--artifacts (never committed).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message, flush=True)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--user-data-dir=" + tempfile.mkdtemp(prefix="ts-chromium-")):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_window_size(1280, 2000)
    return driver


def throughput_units(driver):
    """{model: the unit of its throughput chart} of the page."""
    return driver.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('figure[data-chart=throughput]'))"
        ".filter(f => f.querySelector('svg')).map(f => [f.dataset.model, f.dataset.unit]))")


def open_page(driver, path, name, artifacts, width=1280):
    """Loads the page and waits for its marker; returns what the page reports."""
    driver.set_window_size(width, 2000)
    driver.get("file://" + os.path.abspath(path))
    try:
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(
            "return document.body.dataset.rendered || document.body.dataset.renderError || null"))
    except Exception:
        sys.exit(f"{name}: the page never finished rendering; console: {driver.get_log('browser')}")
    state = driver.execute_script("""
        const figures = Array.from(document.querySelectorAll('figure.chart'));
        return {
          rendered: document.body.dataset.rendered || null,
          error: document.body.dataset.renderError || null,
          announced: Number(document.body.dataset.charts || -1),
          figures: figures.length,
          with_svg: figures.filter(f => f.querySelector('svg')).length,
          scroll_width: document.documentElement.scrollWidth,
          inner_width: window.innerWidth,
          text: document.body.innerText,
        };""")
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(not errors, f"{name}: console errors: {errors}")
    check(state["rendered"] == "true" and state["error"] is None, f"{name}: not rendered: {state['error']}")
    check(state["announced"] == state["figures"] == state["with_svg"],
          f"{name}: {state['announced']} charts announced, {state['figures']} figures, {state['with_svg']} with an SVG")
    check(state["scroll_width"] <= state["inner_width"] + 1,
          f"{name} at {width}px: the page scrolls sideways ({state['scroll_width']} > {state['inner_width']})")
    # The whole page: the window made as tall as the document (headless allows it).
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 20, 16000))
    driver.save_screenshot(os.path.join(artifacts, f"{name}-{width}px.png"))
    return state


def rows_of(driver, section):
    return driver.find_elements(By.CSS_SELECTOR, f"section#{section} tbody tr")


def verdicts(driver):
    """mode -> verdict/classification of the regression rows of mlp on one rank."""
    found = {}
    for row in rows_of(driver, "regressions"):
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        if cells[0] == "mlp" and cells[4] == "1":
            found[cells[3]] = row.get_attribute("data-verdict") + "/" + row.get_attribute("data-classification")
    return found


def summary_of(driver):
    return {el.get_attribute("data-summary"): el.find_element(By.TAG_NAME, "dd").text
            for el in driver.find_elements(By.CSS_SELECTOR, "[data-summary]")}


def why_of(driver):
    """The Why section's articles: kind, title, and each operator row's name, change and share."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('section#why article.why')).map(a => ({
          kind: a.dataset.kind, title: a.dataset.title,
          rows: Array.from(a.querySelectorAll('tbody tr')).map(r => [r.dataset.name, r.dataset.change,
                                                                   r.lastChild.textContent]),
          text: a.textContent}));""")


def confirm_on(args, db, work):
    """torchsweep confirm of the newest night against night 25, served by a real
    coordinator on `db` and one agent whose libtorch runner is the fixture."""
    port_file = os.path.join(work, "port")
    logs = open(os.path.join(work, "cluster.log"), "w")
    coordinator = subprocess.Popen([args.torchsweep, "coordinator", "--listen", "127.0.0.1:0", "--port-file",
                                    port_file, "--db", db, "--heartbeat-s", "0.5"], stdout=logs, stderr=logs)
    agent = None
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting on another process's file: no event to wait on
        endpoint = "127.0.0.1:" + open(port_file).read().strip()
        agent = subprocess.Popen([args.torchsweep, "agent", "--coordinator", endpoint, "--name", "node-b",
                                  "--work-dir", os.path.join(work, "agent"), "--no-default-runners",
                                  "--runner", "libtorch=" + args.fixture, "--peak-probe", "off"],
                                 stdout=logs, stderr=logs)
        return subprocess.run([args.torchsweep, "confirm", "nightly-30", "--baseline", "nightly-25", "--db", db,
                               "--coordinator", endpoint, "--timeout-s", "60"], capture_output=True, text=True)
    finally:
        for process in (agent, coordinator):
            if process:
                process.terminate()
                process.wait(timeout=20)


def run(argv, **kwargs):
    finished = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if finished.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {finished.returncode}:\n{finished.stdout}\n{finished.stderr}")
    return finished


def check_main_job_tables(printed):
    """What the README shows the main job printing: the six configurations'
    medians with the gate's columns, then compiled against eager for the
    three configurations, each speedup and memory reduction marked as too
    few runs for an interval (two repeats), and the break-even."""
    medians, _, compared = printed.partition("Compiled vs eager")
    check("Per-configuration medians" in medians, f"run printed no medians table: {printed}")
    header = next(line for line in medians.splitlines() if line.startswith("model "))
    # A column with one value in every row is said once above the table ("(all rows: flagged=0, ...)"): whether
    # flagged or busy varies depends on how loaded the machine was.
    common = next((line for line in medians.splitlines() if line.startswith("(all rows: ")), "")
    for column in ("precision", "mode", "memory_format", "flagged", "epoch_time_s", "samples_per_s",
                   "peak_memory_mib", "mfu", "compile_time_s", "accuracy_deviation"):
        check(column in header.split() or f" {column}=" in common,
              f"the medians table has no {column}: {common}\n{header}")
    rows = [line for line in medians.splitlines() if line.startswith(("mlp ", "resnet18 "))]
    check(len(rows) == 6, f"expected the 6 configurations of cpu-quick, got {rows}")
    pairs = [line for line in compared.splitlines() if line.startswith(("mlp ", "resnet18 "))]
    check(len(pairs) == 3, f"expected 3 compiled/eager pairs, got {pairs}")
    for line in pairs:
        check(line.count("[n too small: < 5 runs a side]") == 2, f"a pair of two runs a side has an interval: {line}")
        speedup = float(line.split("[n too small")[0].split()[-1])
        check(0 < speedup < 100, f"a speedup out of reason: {line}")
    check("break_even_iters" in compared, f"the comparison names no break-even: {compared}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--fixture", required=True, help="tests/report/report_fixture.cpp")
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--example", required=True, help="the sweep of the README's main job")
    args = parser.parse_args()
    os.makedirs(args.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ts-report-")
    driver = browser()
    try:
        # The README's main job: its report is written beside the store.
        sweep = args.example
        db = os.path.join(work, "run.db")
        finished = run([args.torchsweep, "run", sweep, "--db", db], cwd=work)
        report = os.path.join(work, "run.report.html")
        check(report in finished.stdout, f"run does not say where its report is: {finished.stdout}")
        check_main_job_tables(finished.stdout)
        state = open_page(driver, report, "run", args.artifacts)
        check(state["figures"] >= 3, f"run: {state['figures']} charts, expected speedup, throughput and memory")
        check(len(rows_of(driver, "configurations")) == 6, "run: expected the 6 configurations of cpu-quick")
        check(len(driver.find_elements(By.CSS_SELECTOR, "figure[data-chart=memory] svg")) == 1, "run: no memory chart")
        check(len(driver.find_elements(By.CSS_SELECTOR, "figure[data-chart=speedup] svg")) == 1,
              "run: no speedup chart")
        check(len(rows_of(driver, "environment")) == 1, "run: expected one host in the environment table")
        # No profile in the main job: the Why section says which pairs lack one, and explains none.
        why = driver.execute_script("const s = document.querySelector('section#why'); return s && s.textContent")
        check(why is not None and "3 pair(s) or regression(s) shown above have no profile" in why and not why_of(driver),
              f"run: the Why section reads {why}")
        check(throughput_units(driver) == {"mlp": "samples/s", "resnet18": "samples/s"},
              f"run: the throughput charts' units: {throughput_units(driver)}")
        # The suite's summary: one runner in one environment, its three models passed, none inaccurate.
        suite = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "section#suite tbody td")]
        check(suite[:6] == ["libtorch", "system", "3", "3", "0", suite[5]] and suite[5].endswith("×"),
              f"run: the suite summary reads {suite}")
        # What the compiler did, per configuration: compile time and the accuracy gate (docs/compiler.md).
        headers = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "section#configurations thead th")]
        check({"compile s", "inaccurate", "accuracy deviation"} <= set(headers),
              f"run: the configurations table lacks compile time or the accuracy gate: {headers}")
        deviations = driver.execute_script(
            "const cells = [...document.querySelectorAll('section#configurations tbody tr')].map(row => "
            "[row.dataset.configuration, row.children[arguments[0]].textContent]);"
            "return cells;", headers.index("accuracy deviation"))
        compiled_deviations = [float(text) for label, text in deviations if " compiled " in f" {label} "]
        check(len(compiled_deviations) == 3 and all(0 <= value <= 1 for value in compiled_deviations)
              and all(text == "-" for label, text in deviations if " eager " in f" {label} "),
              f"run: the accuracy gate's deviation per configuration reads {deviations}")
        check(len(driver.find_elements(By.CSS_SELECTOR, "figure[data-chart=compile] svg")) == 1,
              "run: no compile time against speedup chart")
        gate = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "section#compiler tbody tr td")]
        check(gate[:5] == ["libtorch", "torchscript-nnc", "6", "0", "0"],
              f"run: the accuracy gate per runner reads {gate[:5]}")
        # Each compiled configuration's break-even, in iterations or "never" (docs/compiler.md).
        break_even = driver.execute_script(
            "const tables = [...document.querySelectorAll('section#compiler table')];"
            "const table = tables[tables.length - 1];"
            "const at = [...table.querySelectorAll('thead th')].map(th => th.textContent).indexOf('break-even iterations');"
            "return at < 0 ? null : [...table.querySelectorAll('tbody tr')].map(row => row.children[at].textContent);")
        check(break_even is not None and len(break_even) == 3
              and all(text == "never" or text.isdigit() for text in break_even),
              f"run: the compiler section's break-even reads {break_even}")
        # Which peak each utilisation used: the CPU's, with the probe's kernel that reached it.
        peaks = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")] for row in rows_of(driver, "peaks")]
        check(len(peaks) >= 1 and all(row[4] != "-" and float(row[3]) > 0 for row in peaks),
              f"run: the peaks the utilisation used read {peaks}")
        check(summary_of(driver).get("inaccurate") == "0",
              f"run: the summary does not count the inaccurate runs: {summary_of(driver)}")
        # A row's command reproduces that configuration, and only it.
        command = driver.execute_script(
            "return document.querySelector('section#configurations code.command').textContent")
        configuration = driver.execute_script(
            "return document.querySelector('section#configurations tbody tr').dataset.configuration")
        rerun = os.path.join(work, "rerun")
        os.makedirs(rerun)
        environment = dict(os.environ, PATH=os.path.dirname(args.torchsweep) + os.pathsep + os.environ["PATH"])
        reproduced = subprocess.run(["sh", "-c", command + " --db repro.db --no-report"], cwd=rerun, env=environment,
                                    capture_output=True, text=True)
        check(reproduced.returncode == 0, f"run: the reproducing command failed: {command}\n{reproduced.stderr}")
        exported = json.loads(run([args.torchsweep, "query", "--db", os.path.join(rerun, "repro.db"), "--format",
                                   "json"]).stdout)
        shown = {" ".join(str(row[k]) for k in ("model", "precision", "mode")) for row in exported}
        model, _, _, precision, mode = configuration.split()[:5]
        check(shown == {f"{model} {precision} {mode}"}, f"run: '{command}' ran {shown}, not {configuration}")
        open_page(driver, report, "run", args.artifacts, width=390)

        # A 30-night history with one step and one blip.
        history_db = os.path.join(work, "history.db")
        run([args.fixture, "--db", history_db, "history"])
        history = os.path.join(work, "history.html")
        run([args.torchsweep, "report", "--db", history_db, "--tag", "nightly", "--baseline", "nightly-25",
             "--out", history])
        state = open_page(driver, history, "history", args.artifacts)
        trends = driver.execute_script("""
            return Array.from(document.querySelectorAll('figure[data-chart=trend]')).map(f => ({
              configuration: f.dataset.configuration, steps: Number(f.dataset.changePoints),
              band: f.dataset.noiseBand, rects: f.querySelectorAll('path, rect').length,
              labels: Array.from(f.querySelectorAll('text')).map(t => t.textContent).filter(t => t.startsWith('step'))}));""")
        by_configuration = {" ".join(t["configuration"].split()[i] for i in (0, 4, 5)): t for t in trends}
        check(len(trends) == 4, f"history: {len(trends)} trend charts, expected 4: {trends}")
        step = by_configuration.get("mlp compiled 1", {})
        check(step.get("steps") == 1, f"history: the injected step is not found once: {step}")
        check(any(re.match(r"step \+2[0-9]\.[0-9]% \(slower\)", label) for label in step.get("labels", [])),
              f"history: the step is not marked on its chart: {step}")
        blip = by_configuration.get("mlp eager 1", {})
        check(blip.get("steps") == 0, f"history: the blip was taken for a step: {blip}")
        for flat in ("resnet18 eager 1", "mlp eager 2"):
            check(by_configuration.get(flat, {}).get("steps") == 0, f"history: a flat series has a step: {flat}")
        check(verdicts(driver) == {"compiled": "regressed/flagged", "eager": "same/"},
              f"history: the compiled regression is not flagged: {verdicts(driver)}")
        summary = summary_of(driver)
        check(summary.get("regressions") == "1" and summary.get("flagged_regressions") == "1",
              f"history: summary {summary}")
        check(summary.get("configurations") == "4" and summary.get("runs") == "20", f"history: summary {summary}")
        check(len(driver.find_elements(By.CSS_SELECTOR, "figure[data-chart=scaling] svg")) == 1,
              "history: no scaling chart for the 2-rank configuration")
        check(len(rows_of(driver, "configurations")) == 4, "history: expected 4 configuration rows")
        # Why (docs/explain.md): the flagged regression's planted operator first, all of the step it added; the
        # compiled-vs-eager pair's fused kernel added and ATen's activation removed.
        why = {article["kind"]: article for article in why_of(driver)}
        check(sorted(why) == ["compiled vs eager", "flagged regression"], f"history: the Why section has {sorted(why)}")
        regression = why.get("flagged regression", {"rows": [[None]], "text": ""})
        check(regression["rows"][0][:2] == ["aten::bmm", "added"] and regression["rows"][0][2].startswith("+"),
              f"history: the regression's Why does not name the planted operator first: {regression['rows']}")
        check(" within the bound " in regression["text"], f"history: the regression's Why is not reconciled: "
              f"{regression['text']}")
        pair = {row[0]: row[1] for row in why.get("compiled vs eager", {"rows": []})["rows"]}
        check(pair.get("graph_0_cpp_fused_relu_0") == "added" and pair.get("aten::relu") == "removed",
              f"history: the compiled-vs-eager Why reads {pair}")
        # Noise (docs/noise.md): a band on every history chart, and the noise page's table.
        check(all(t.get("band") for t in trends), f"history: a trend chart without its noise band: {trends}")
        check(len(rows_of(driver, "noise")) == 4, "history: expected 4 rows on the noise page")
        # The tables sort on a click.
        header = driver.find_element(By.CSS_SELECTOR, "section#configurations th:nth-child(4) button")
        header.click()
        check(driver.find_element(By.CSS_SELECTOR, "section#configurations th:nth-child(4)")
              .get_attribute("aria-sort") == "ascending", "history: sorting does not mark its column")
        times = [float(row.find_elements(By.TAG_NAME, "td")[3].get_attribute("data-value"))
                 for row in rows_of(driver, "configurations")]
        check(times == sorted(times), f"history: not sorted by epoch time: {times}")
        open_page(driver, history, "history", args.artifacts, width=390)

        # Confirmation through a real coordinator and agent on the history's store.
        confirm = confirm_on(args, history_db, work)
        check(confirm.returncode == 6, f"confirm exited {confirm.returncode}, expected 6:\n{confirm.stdout}\n{confirm.stderr}")
        run([args.torchsweep, "report", "--db", history_db, "--tag", "nightly", "--baseline", "nightly-25",
             "--out", history])
        open_page(driver, history, "confirmed", args.artifacts)
        check(verdicts(driver) == {"compiled": "regressed/confirmed", "eager": "same/"},
              f"confirmed: the regression is not confirmed: {verdicts(driver)}")
        check(summary_of(driver).get("confirmed") == "1", f"confirmed: summary {summary_of(driver)}")
        check("confirmed regression" in {article["kind"] for article in why_of(driver)},
              f"confirmed: no Why for the confirmed regression: {[a['kind'] for a in why_of(driver)]}")

        # One run per configuration, and no sweep at all.
        for kind, expected in (("single", "fewer than 5 runs"), ("empty", "holds no sweep")):
            db = os.path.join(work, kind + ".db")
            run([args.fixture, "--db", db, kind])
            page = os.path.join(work, kind + ".html")
            run([args.torchsweep, "report", "--db", db, "--out", page])
            state = open_page(driver, page, kind, args.artifacts)
            check(expected in state["text"], f"{kind}: the page does not say '{expected}'")
            if kind == "single":  # its newest sweep: a language model's, whose throughput is in tokens
                check(throughput_units(driver) == {"gpt": "tokens/s"}, f"single: {throughput_units(driver)}")
                decode = driver.execute_script(
                    "const f = document.querySelector('section#decode figure[data-chart=decode]');"
                    "return f && f.querySelector('svg') ? Array.from(f.querySelectorAll('svg text'))"
                    ".map(t => t.textContent) : null")
                check(decode is not None, "single: no decode-latency chart")
                texts = " | ".join(decode or [])
                for expected in ("p50 10 ms, p99 20 ms", "p50 6 ms, p99 12 ms", "eager", "compiled"):
                    check(expected in texts, f"single: the decode chart lacks '{expected}': {texts}")
    finally:
        driver.quit()
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("report pages render as expected; screenshots in", args.artifacts)


if __name__ == "__main__":
    main()
