#!/usr/bin/env python3
"""Checks schemas/ with an independent validator (python3-jsonschema).

Runs torchsweep-worker on the issue's reference one-off commands (ResNet-18,
eager / compiled / bf16, tiny shapes) and on an unsupported job, and
validates every result document it writes against result.schema.json, with
the job schema resolved through its $ref. Exits non-zero on any violation.
"""
import argparse
import json
import pathlib
import subprocess
import sys

import jsonschema
from referencing import Registry, Resource


def load_registry(schemas: pathlib.Path):
    resources = []
    for path in schemas.glob("*.schema.json"):
        contents = json.loads(path.read_text())
        resource = Resource.from_contents(contents)
        resources.append((contents["$id"], resource))
        resources.append((path.name, resource))
    return Registry().with_resources(resources)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--schemas", type=pathlib.Path, required=True)
    parser.add_argument("--worker", required=True)
    args = parser.parse_args()

    registry = load_registry(args.schemas)
    result_schema = json.loads((args.schemas / "result.schema.json").read_text())
    validator = jsonschema.Draft7Validator(result_schema, registry=registry)
    jsonschema.Draft7Validator.check_schema(result_schema)

    one_off = ["--model", "resnet18", "--input-size", "32", "--batch-size", "4",
               "--epochs", "2", "--warmup", "3", "--iters", "2"]
    runs = {
        "resnet18 eager": one_off + ["--mode", "eager"],
        "resnet18 compiled": one_off + ["--mode", "compiled"],
        "resnet18 bf16": one_off + ["--mode", "eager", "--precision", "bf16"],
        "mlp infer compiled": ["--model", "mlp", "--batch-size", "4", "--task", "infer", "--mode", "compiled",
                               "--epochs", "2", "--warmup", "3", "--iters", "3"],
        "fp16 on cpu": ["--model", "mlp", "--batch-size", "4", "--precision", "fp16"],
    }
    failures = 0
    for name, flags in runs.items():
        finished = subprocess.run([args.worker, *flags, "--out", "-"], capture_output=True, text=True)
        if finished.returncode not in (0, 3):
            print(f"FAIL {name}: exit {finished.returncode}\n{finished.stderr}")
            failures += 1
            continue
        document = json.loads(finished.stdout)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        for error in errors:
            print(f"FAIL {name}: {'/'.join(map(str, error.path))}: {error.message}")
        failures += bool(errors)
        if not errors:
            print(f"ok   {name}: status {document['status']}")
    print(f"{len(runs) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
