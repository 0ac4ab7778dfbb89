#!@TS_ANALYSIS_PYTHON@
"""torchsweep-parquet: writes the tables of `torchsweep export --format
parquet` (docs/query.md) as Parquet files, typed as
schemas/result_columns.json says (the export hands the column types along
with the rows). Each file is written to a temporary name in the target
folder and renamed into place only once every table is written, so a
failed export leaves no half-written file. Runs in the analysts' venv
(readers/python/requirements/analysis.lock)."""
import argparse
import datetime
import json
import os
import sys

import pyarrow
import pyarrow.parquet

TYPES = {"string": pyarrow.string(), "int64": pyarrow.int64(), "float64": pyarrow.float64(),
         "bool": pyarrow.bool_(), "timestamp": pyarrow.timestamp("us", tz="UTC")}


def typed(value, kind):
    if value is None:
        return None
    if kind == "bool":
        return bool(value)
    if kind == "timestamp":  # ISO 8601 UTC, as the store keeps it (2026-11-30T07:15:00.123Z)
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


def arrow_table(table):
    columns = table["columns"]
    arrays = [pyarrow.array([typed(row[i], column["type"]) for row in table["rows"]], type=TYPES[column["type"]])
              for i, column in enumerate(columns)]
    schema = pyarrow.schema([pyarrow.field(column["name"], TYPES[column["type"]]) for column in columns],
                            metadata={"torchsweep": "schemas/result_columns.json"})
    return pyarrow.Table.from_arrays(arrays, schema=schema)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="the export's tables as JSON (torchsweep export writes it)")
    parser.add_argument("--out", required=True, help="the folder NAME.parquet goes to, for each table")
    args = parser.parse_args()
    with open(args.input) as handle:
        tables = json.load(handle)["tables"]
    written = []
    try:
        for name, table in tables.items():
            temporary = os.path.join(args.out, f".{name}.parquet.{os.getpid()}.partial")
            written.append((temporary, os.path.join(args.out, f"{name}.parquet")))
            pyarrow.parquet.write_table(arrow_table(table), temporary)
        for temporary, final in written:
            os.replace(temporary, final)
    except BaseException:
        for temporary, _ in written:
            if os.path.exists(temporary):
                os.remove(temporary)
        raise
    for _, final in written:
        print(final)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # one line to stderr and a non-zero exit; the CLI says it failed
        sys.exit(f"torchsweep-parquet: {error}")
