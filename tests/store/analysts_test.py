#!/usr/bin/env python3
"""The store in the tools analysts use (docs/store.md, docs/query.md), on a
store filled by two real `torchsweep run` sweeps (configurations with odd
and even numbers of runs):
- config_medians read by the plain sqlite3 shell, by Python's sqlite3
  through pandas and by DuckDB's SQLite reader gives each configuration
  exactly the medians `torchsweep query` computes;
- `torchsweep export --format parquet` read back by pyarrow and DuckDB
  equals the store row for row, typed as schemas/result_columns.json says,
  and its bad input is refused with nothing written;
- docs/analysis.md's notebook blocks run and find query's speedups.
Runs in the analysts' venv (readers/python/requirements/analysis.lock)."""
import argparse
import datetime
import json
import math
import os
import pathlib
import sqlite3
import subprocess
import tempfile

import duckdb
import pandas
import pyarrow
import pyarrow.parquet
from duckdb_extensions import import_extension

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = REPOSITORY / "schemas"

# query's default grouping (store/configuration.cpp); a sparse axis no result has is no column of query's
KEY = ["model", "task", "batch_size", "seq_len", "prompt_len", "new_tokens", "precision", "mode", "gpus",
       "device_name", "runner", "env", "model_commit", "data", "memory_format"]
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
        key = tuple(row.get(k) for k in KEY)
        assert key not in out, f"{what}: configuration {key} twice"
        out[key] = row
    return out


def expected_from_query(torchsweep, db):
    metrics = ",".join(metric for metric, _, _ in FIGURES.values())
    rows = json.loads(run([torchsweep, "query", "--db", db, "--format", "json", "--metric", metrics]))
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


def check_parquet(torchsweep, db, work):
    """export --format parquet, read back by pyarrow and DuckDB, row for row
    against the store; its bad input refused with nothing written."""
    out = os.path.join(work, "parquet")
    os.mkdir(out)
    run([torchsweep, "export", "--db", db, "--format", "parquet", "--out", out])
    assert sorted(os.listdir(out)) == ["results.parquet", "steps.parquet"], os.listdir(out)  # nothing else left
    contract = json.load(open(os.path.join(SCHEMAS, "result_columns.json")))["tables"]
    arrow_types = {"string": pyarrow.string(), "int64": pyarrow.int64(), "float64": pyarrow.float64(),
                   "bool": pyarrow.bool_(), "timestamp": pyarrow.timestamp("us", tz="UTC")}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
        for name, spec in contract.items():
            table = pyarrow.parquet.read_table(os.path.join(out, f"{name}.parquet"))
            wanted = [(column["name"], arrow_types[column["type"]]) for column in spec["columns"]]
            assert [(field.name, field.type) for field in table.schema] == wanted, table.schema
            names = [column["name"] for column in spec["columns"]]
            rows = store.execute(f"SELECT {', '.join(names)} FROM {spec['source']} "
                                 f"ORDER BY {', '.join(spec['order'])}").fetchall()
            exported = table.to_pylist()
            assert len(exported) == len(rows) > 0, f"{name}: {len(exported)} rows, the store {len(rows)}"
            for stored, row in zip(rows, exported):
                for column, value in zip(spec["columns"], stored):
                    got = row[column["name"]]
                    if value is not None and column["type"] == "timestamp":
                        value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
                    elif value is not None and column["type"] == "bool":
                        value = bool(value)
                    assert got == value and type(got) is type(value), \
                        f"{name} {row.get('job_id')} {column['name']}: {got!r} in Parquet, {value!r} in the store"
            print(f"parquet {name}: {len(rows)} rows, {len(names)} typed columns, equal to the store row for row")
        # DuckDB reads the files too: the steps' total time and each result's step count.
        connection = duckdb.connect()
        steps = os.path.join(out, "steps.parquet")
        results = os.path.join(out, "results.parquet")
        total = connection.execute(f"SELECT COUNT(*), SUM(seconds) FROM read_parquet('{steps}')").fetchone()
        assert total[0] == store.execute("SELECT COUNT(*) FROM result_steps").fetchone()[0], total
        joined = connection.execute(
            f"SELECT COUNT(DISTINCT r.job_id) FROM read_parquet('{results}') r "
            f"JOIN read_parquet('{steps}') s USING (job_id, attempt)").fetchone()[0]
        assert joined == store.execute("SELECT COUNT(*) FROM results").fetchone()[0], joined
        print(f"DuckDB read_parquet: {total[0]} steps of {joined} results")

    # Bad input: a folder that does not exist; a file that is not a store. Nothing is written.
    missing = subprocess.run([torchsweep, "export", "--db", db, "--format", "parquet", "--out",
                              os.path.join(work, "no-such-folder")], capture_output=True, text=True)
    assert missing.returncode == 2 and "--out" in missing.stderr and "no-such-folder" in missing.stderr, missing
    empty = os.path.join(work, "empty")
    os.mkdir(empty)
    not_a_store = os.path.join(work, "notes.txt")
    with open(not_a_store, "w") as handle:
        handle.write("not a database\n" * 100)
    refused = subprocess.run([torchsweep, "export", "--db", not_a_store, "--format", "parquet", "--out", empty],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "notes.txt" in refused.stderr, refused
    assert os.listdir(empty) == [], os.listdir(empty)
    a_file = subprocess.run([torchsweep, "export", "--db", db, "--format", "parquet", "--out", not_a_store],
                            capture_output=True, text=True)
    assert a_file.returncode == 2 and "notes.txt" in a_file.stderr, a_file
    print("bad input refused, naming it, nothing written")


def check_notebook(torchsweep, db, parquet):
    """docs/analysis.md's python blocks, run as they are, in order; its
    pandas speedups equal `torchsweep query --compare mode`'s estimates."""
    page = (REPOSITORY / "docs" / "analysis.md").read_text()
    blocks = page.split("```python\n")[1:]
    assert len(blocks) >= 3, "docs/analysis.md lost its python blocks"
    namespace = {"STORE": db, "PARQUET": parquet}
    for block in blocks:
        exec(compile(block.split("```")[0], "docs/analysis.md", "exec"), namespace)
    compared = json.loads(run([torchsweep, "query", "--db", db, "--compare", "mode", "--format", "json"]))
    expected = {(row["model"], row["batch_size"], row["precision"]): row["speedup"] for row in compared}
    for frame in ("speedups", "duck_speedups"):
        found = {(row["model"], row["batch_size"], row["precision"]): row["speedup"]
                 for row in namespace[frame].to_dict("records")}
        assert found == expected, f"docs/analysis.md {frame}: {found} != torchsweep query {expected}"
    assert len(namespace["steps"]) == 4 and namespace["steps"]["steps"].sum() == 60, namespace["steps"]
    print(f"docs/analysis.md: {len(blocks)} blocks ran; speedups exactly as torchsweep query --compare mode")


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
        assert list(shell[0]) == KEY + ["results", *FIGURES], f"the view's columns: {list(shell[0])}"
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

        check_parquet(args.torchsweep, db, work)
        check_notebook(args.torchsweep, db, os.path.join(work, "parquet"))


if __name__ == "__main__":
    main()
