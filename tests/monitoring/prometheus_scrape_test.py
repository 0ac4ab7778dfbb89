#!/usr/bin/env python3
"""The coordinator on a real Prometheus (docs/operations.md): a coordinator
with --metrics-listen and an agent run a two-job sweep through the LibTorch
worker; promtool accepts what /metrics serves; a Prometheus server scraping
the coordinator then answers queries with the expected series (agents by
label, jobs per sweep and state, results ingested, the latency histograms,
heartbeat ages, store size).

    prometheus_scrape_test.py --torchsweep PATH --worker PATH --prometheus PATH --promtool PATH
"""
import argparse
import json
import pathlib
import subprocess
import sys
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from processes import ProcessTestCase, free_port, wait_until  # noqa: E402

ARGS = None
SWEEP = """name: scrape
axes:
  batch_size: [4, 8]
fixed: {model: mlp, input_size: 16, width: 32, depth: 2, epochs: 1, warmup: 1, iters: 2, threads: 1}
"""


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


def series_value(text, line_start):
    """The value of the exposition line that starts with `line_start`, or None."""
    for line in (text or "").splitlines():
        if line.startswith(line_start + " "):
            return float(line.split()[-1])
    return None


class PrometheusScrape(ProcessTestCase):
    FOLDER_PREFIX = "ts_prometheus_"

    def query(self, expression):
        """The result vector of an instant query, [] while Prometheus has none."""
        url = f"http://127.0.0.1:{self.prometheus_port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
        body = http_get(url)
        if body is None:
            return []
        answer = json.loads(body)
        return answer["data"]["result"] if answer.get("status") == "success" else []

    def test_a_real_prometheus_scrapes_the_coordinators_series(self):
        self.start("coordinator", [ARGS.torchsweep, "coordinator", "--listen", "127.0.0.1:0",
                                   "--db", str(self.folder / "store.db"), "--port-file", str(self.folder / "port"),
                                   "--metrics-listen", "127.0.0.1:0",
                                   "--metrics-port-file", str(self.folder / "metrics-port"), "--heartbeat-s", "0.5"])
        port = wait_until(lambda: self.read_file("port"), 60, "the coordinator's port")
        metrics_port = wait_until(lambda: self.read_file("metrics-port"), 60, "the metrics port")
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        self.start("agent", [ARGS.torchsweep, "agent", "--coordinator", f"127.0.0.1:{port}", "--name", "scrape-agent",
                             "--label", "pool=ci", "--no-default-runners", "--runner", f"libtorch={ARGS.worker}",
                             "--peak-probe", "off", "--work-dir", str(self.folder / "agent")])
        wait_until(lambda: series_value(http_get(metrics_url), "torchsweep_agents_connected") == 1, 60, "the agent")

        (self.folder / "scrape.yaml").write_text(SWEEP)
        subprocess.run([ARGS.torchsweep, "submit", "--coordinator", f"127.0.0.1:{port}",
                        str(self.folder / "scrape.yaml")], check=True, capture_output=True, timeout=60)
        text = wait_until(lambda: (lambda t: t if series_value(t, 'torchsweep_jobs_finished_total{state="done"}') == 2
                                   else None)(http_get(metrics_url)), 180, "two jobs done")
        checked = subprocess.run([ARGS.promtool, "check", "metrics"], input=text, capture_output=True, text=True)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.assertEqual(series_value(text, "torchsweep_results_ingested_total"), 2)
        self.assertEqual(series_value(text, "torchsweep_dispatch_latency_seconds_count"), 2)

        self.prometheus_port = free_port()
        (self.folder / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: torchsweep\n    static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]\n")
        self.start("prometheus", [ARGS.prometheus, f"--config.file={self.folder / 'prometheus.yml'}",
                                  f"--storage.tsdb.path={self.folder / 'tsdb'}",
                                  f"--web.listen-address=127.0.0.1:{self.prometheus_port}"])
        ingested = wait_until(lambda: self.query("torchsweep_results_ingested_total"), 90, "the first scrape")
        self.assertEqual(ingested[0]["metric"]["job"], "torchsweep")
        self.assertEqual(float(ingested[0]["value"][1]), 2)
        self.assertEqual(float(self.query('torchsweep_agents_connected_by_label{label="pool=ci"}')[0]["value"][1]), 1)
        done = self.query('torchsweep_jobs{state="done"}')
        self.assertEqual(len(done), 1)
        self.assertTrue(done[0]["metric"]["sweep"].startswith("scrape-"), done)
        self.assertEqual(float(done[0]["value"][1]), 2)
        self.assertEqual(float(self.query("sum(torchsweep_ingest_latency_seconds_count)")[0]["value"][1]), 2)
        age = self.query('torchsweep_agent_heartbeat_age_seconds{agent="scrape-agent"}')
        self.assertLess(float(age[0]["value"][1]), 5)
        self.assertGreater(float(self.query("torchsweep_store_bytes")[0]["value"][1]), 0)
        up = self.query('up{job="torchsweep"}')
        self.assertEqual(float(up[0]["value"][1]), 1)

        # A gone agent's series go with it.
        agent = next(process for name, process, _ in self.processes if name == "agent")
        agent.terminate()
        text = wait_until(lambda: (lambda t: t if series_value(t, "torchsweep_agents_connected") == 0 else None)(
            http_get(metrics_url)), 60, "the agent's departure")
        self.assertNotIn("scrape-agent", text)
        self.assertNotIn("pool=ci", text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--torchsweep", "--worker", "--prometheus", "--promtool"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
