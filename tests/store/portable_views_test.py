#!/usr/bin/env python3
"""The store's views read in the clients analysts use (docs/store.md): a
store filled by two real `torchsweep run` sweeps (configurations with odd
and even numbers of runs), read through config_medians by the plain
sqlite3 shell, by Python's sqlite3 through pandas and by DuckDB's SQLite
reader, gives each configuration exactly the medians `torchsweep query`
computes. Runs in the analysts' venv (readers/python/requirements/analysis.lock)."""
import argparse
import json
import math
import os
import sqlite3
import subprocess
import tempfile

import duckdb
import pandas
from duckdb_extensions import import_extension

KEY = ["model", "task", "batch_size", "precision", "mode", "compiler", "runner", "gpus", "device_name"]
# config_medians column -> (query metric, its column, the factor from the view's unit to the query's)
FIGURES = {"median_epoch_s": ("epoch_time", "epoch_time_s", 1.0),
           "samples_per_s": ("samples_per_s", "samples_per_s", 1.0),
           "peak_memory_bytes": ("peak_memory", "peak_memory_mib", 1.0 / (1 << 20)),  # a power of two: exact
           "compile_s": ("compile_time", "compile_time_s", 1.0)}
SWEEPS = {  # batch size 8 gets 2 + 1 runs (odd), 16 gets 2 (even)
    "a.yaml": "name: portable-a\naxes: {batch_size: [8, 16], mode: [eager, compiled]}\n"
              "fixed: {model: mlp, epochs: 2, warmup: 2, iters: 3}\nrepeats: 2\n",
    "b.yaml": "name: portable-b\naxes: {mode: [eager, compiled]}\n"
              "fixed: {model: mlp, batch_size: 8, epochs: 2, warmup: 2, iters: 3}\n"}


def run(command):
    finished = subprocess.run(command, capture_output=True, text=True)
    assert finished.returncode == 0, f"{command}: exit {finished.returncode}\n{finished.stderr[-3000:]}"
    return finished.stdout


def keyed(rows, what):
    """{configuration key: row} from dicts; NaN (pandas' null) as None."""
    out = {}
    for row in rows:
        row = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        key = tuple(row[k] for k in KEY)
        assert key not in out, f"{what}: configuration {key} twice"
        out[key] = row
    return out


def expected_from_query(torchsweep, db):
    metrics = ",".join(metric for metric, _, _ in FIGURES.values())
    rows = json.loads(run([torchsweep, "query", "--db", db, "--format", "json", "--group-by", ",".join(KEY),
                           "--metric", metrics]))
    return keyed(rows, "torchsweep query")


def check(reader, found, expected):
    assert set(found) == set(expected), f"{reader}: configurations {sorted(found)} != {sorted(expected)}"
    for key, row in expected.items():
        view = found[key]
        assert int(view["results"]) == row["runs"], f"{reader} {key}: {view['results']} results != {row['runs']}"
        for column, (_, query_column, factor) in FIGURES.items():
            want = row[query_column]
            got = view[column]
            if want is None:
                assert got is None, f"{reader} {key} {column}: {got!r}, expected null"
                continue
            assert got is not None, f"{reader} {key} {column}: null, expected {want!r}"
            # Exact: the view's median is the same arithmetic as torchsweep's.
            assert float(got) * factor == want, f"{reader} {key} {column}: {float(got)!r} x {factor} != {want!r}"
    print(f"{reader}: {len(expected)} configurations, every median exactly as torchsweep query")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "results.db")
        for name, text in SWEEPS.items():
            path = os.path.join(work, name)
            with open(path, "w") as handle:
                handle.write(text)
            run([args.torchsweep, "run", path, "--db", db, "--no-report"])
        expected = expected_from_query(args.torchsweep, db)
        assert sorted(row["runs"] for row in expected.values()) == [2, 2, 3, 3], expected

        # The plain sqlite3 shell: no function of torchsweep's; -json prints reals to round-trip.
        shell = json.loads(run(["sqlite3", "-readonly", "-json", db, "SELECT * FROM config_medians"]))
        check("sqlite3 " + run(["sqlite3", "--version"]).split()[0], keyed(shell, "sqlite3"), expected)

        # Python's sqlite3 through pandas.
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            frame = pandas.read_sql("SELECT * FROM config_medians", connection)
        check(f"pandas {pandas.__version__} (sqlite3 {sqlite3.sqlite_version})",
              keyed(frame.to_dict("records"), "pandas"), expected)

        # DuckDB's SQLite reader, its extension from the venv (nothing downloaded).
        import_extension("sqlite_scanner")
        connection = duckdb.connect()
        connection.execute("LOAD sqlite_scanner")
        connection.execute(f"ATTACH '{db}' AS store (TYPE sqlite, READ_ONLY)")
        cursor = connection.execute("SELECT * FROM store.config_medians")
        columns = [column[0] for column in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
        check(f"DuckDB {duckdb.__version__}", keyed(rows, "duckdb"), expected)


if __name__ == "__main__":
    main()
