"""The worker contract of docs/worker.md for Python runners:

    RUNNER --job FILE|- --out FILE|-      RUNNER --version | --list-models

one job document in (schemas/job.schema.json), one result document out
(schemas/result.schema.json), exit ok (0), invalid_input (2: invalid job, no
result), run_failed (3: failed or unsupported, result written) or
internal_error (1); the codes, the log-line and the progress-line formats
are schemas/runner_contract.json's, read here as the C++ side reads them.
"""
import argparse
import datetime
import json
import logging
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import jsonschema

from . import build_info, environment, user_models
from .errors import InvalidJob, Unsupported

# Installed beside the binaries: bin/RUNNER, share/torchsweep/{python,schemas}.
SCHEMA_DIR = pathlib.Path(os.environ.get("TORCHSWEEP_SCHEMAS", pathlib.Path(__file__).resolve().parents[2] / "schemas"))
BIN_DIR = pathlib.Path(__file__).resolve().parents[4] / "bin"  # the runners' and torchsweep's
RUNNER_CONTRACT = json.loads((SCHEMA_DIR / "runner_contract.json").read_text())
_EXIT_CODES = RUNNER_CONTRACT["exit_codes"]
EXIT_OK, EXIT_INTERNAL = _EXIT_CODES["ok"], _EXIT_CODES["internal_error"]
EXIT_INVALID, EXIT_FAILED = _EXIT_CODES["invalid_input"], _EXIT_CODES["run_failed"]
# The result's execution.autocast_dtype of each job precision.
AUTOCAST_DTYPES = {"fp32": None, "bf16": "bfloat16", "fp16": "float16"}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class _ContractFormatter(logging.Formatter):
    """TIMESTAMP LEVEL PROGRAM: MESSAGE, as schemas/runner_contract.json
    spells it (the agent quotes a failed runner's last ERROR line)."""
    LINE = RUNNER_CONTRACT["log_line"]
    NAMES = dict(zip((logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR), LINE["levels"]))

    def format(self, record):
        stamp = datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc)
        level = self.NAMES.get(record.levelno, self.LINE["failure_level"]).ljust(self.LINE["level_width"])
        return (f"{stamp.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {level} {record.name}"
                f"{self.LINE['program_separator']}{record.getMessage()}")


def logger(program):
    """The runner's logger: Python's logging, on stderr in the contract's line format."""
    log = logging.getLogger(program)
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_ContractFormatter())
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def schema(name):
    return json.loads((SCHEMA_DIR / name).read_text())


def model_catalogue():
    """schemas/models.json: each model's knobs and their defaults."""
    return {name: entry for name, entry in schema("models.json").items() if not name.startswith("$")}


def model_libraries():
    """schemas/model_libraries.json: the libraries models are named from (LIBRARY:NAME)."""
    return {name: entry for name, entry in schema("model_libraries.json").items() if not name.startswith("$")}


def model_entry(model):
    """The catalogue entry of a built-in model, or of the library a
    LIBRARY:NAME model comes from, for a job whose resolution found it."""
    library, colon, _ = model.partition(":")
    return model_libraries()[library] if colon else model_catalogue()[model]


def validate_job(document):
    """Raises InvalidJob naming the first offending field."""
    validator = jsonschema.Draft7Validator(schema("job.schema.json"))
    error = next(iter(sorted(validator.iter_errors(document), key=lambda e: [str(part) for part in e.path])), None)
    if error is not None:
        raise InvalidJob(".".join(str(part) for part in error.path), error.message)


def resolve_job(document, runner_name):
    """The resolved job (docs/worker.md, "The resolved job"). An agent's
    job comes resolved; one given by hand is resolved by `torchsweep
    resolve`, the agent's own code, found in the installation's bin/ or on
    PATH.
    Then what only this runner can tell is checked."""
    validate_job(document)
    job = document if document.get("resolved") else resolved_by_torchsweep(document, runner_name)
    if model_entry(job["model"]).get("under_model_path"):  # the user's own model: its path checked before anything runs
        user_models.check_path(job)
    if job["data_parallel"] == "always":
        raise InvalidJob("data_parallel", "always (the one-rank data-parallel path) is the LibTorch worker's; "
                                          "this runner trains in one process without collectives")
    return job


def resolved_by_torchsweep(document, runner_name):
    """`document` resolved by `torchsweep resolve` (InvalidJob as it says)."""
    program = shutil.which("torchsweep", path=os.pathsep.join([str(BIN_DIR), os.environ.get("PATH", "")]))
    if program is None:
        raise InvalidJob("resolved", "a job no agent resolved needs `torchsweep resolve`, and no torchsweep is "
                                     f"in {BIN_DIR} or on PATH")
    finished = subprocess.run([program, "resolve", "--runner", runner_name, "-"], input=json.dumps(document),
                              capture_output=True, text=True)
    answer = json.loads(finished.stdout) if finished.stdout.strip() else {}
    if "invalid" in answer:
        raise InvalidJob(answer["invalid"]["field"], answer["invalid"]["problem"])
    if finished.returncode != EXIT_OK:
        raise RuntimeError(f"torchsweep resolve failed ({finished.returncode}): {finished.stderr.strip()}")
    return answer


def check_positions(job, positions, spelled):
    """InvalidJob("new_tokens") when a generation does not fit `positions`."""
    if job["prompt_len"] + job["new_tokens"] > positions:
        raise InvalidJob("new_tokens", f"prompt_len ({job['prompt_len']}) + new_tokens ({job['new_tokens']}) is "
                                       f"beyond the {positions} positions of '{job['model']}' ({spelled})")


def write_result(path, document):
    text = json.dumps(document, indent=2) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    # Atomically: a reader never sees half a document.
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".result-")
    with os.fdopen(handle, "w") as out:
        out.write(text)
    os.replace(temporary, path)


def report_progress(epoch, epochs, seconds):
    """One line per timed epoch in $TORCHSWEEP_PROGRESS_FILE (docs/worker.md)."""
    spelled = RUNNER_CONTRACT["progress"]
    path = os.environ.get(spelled["environment_variable"])
    if path:
        with open(path, "a") as progress:
            progress.write(json.dumps(dict(zip(spelled["fields"], (epoch, epochs, seconds)))) + "\n")


class Framework:
    """What a runner adds to the harness."""
    MODES = ("eager", "compiled")  # the job modes it runs
    PRECISIONS = ("fp32", "bf16", "fp16")  # the job precisions it runs (fp16: on CUDA)
    TASKS = ("train", "infer")  # the job tasks it runs (generate: a decoder's, docs/language-models.md)
    beside_result = "."  # the folder of files it writes beside the result (a profile's trace); set by main

    def versions(self):
        """{"torch": "2.6.0", "cuda": None}: the --version line, framework first."""
        raise NotImplementedError

    def library_models(self, library):
        """The NAMEs of LIBRARY:NAME it builds, for the libraries that list
        it among their runners (schemas/model_libraries.json)."""
        raise NotImplementedError

    def run(self, job, result):
        """Runs the resolved job, filling result's execution, timing, loss and
        memory; raises Unsupported for what cannot run here."""
        raise NotImplementedError

    def context(self):
        """The framework's part of the result context."""
        raise NotImplementedError


def main(argv, name, make_framework):
    """The contract around the framework of runner `name`; `make_framework`
    is called once the job is valid, so a bad job costs no framework import."""
    parser = argparse.ArgumentParser(prog=f"torchsweep-{name}",
                                     description=f"torchsweep's {name} runner (the worker contract, docs/worker.md)")
    parser.add_argument("--job", help="job document (FILE, or - for stdin)")
    parser.add_argument("--out", help="where the result document goes (FILE, or - for stdout)")
    parser.add_argument("--version", action="store_true", help="print the versions and exit")
    parser.add_argument("--list-models", action="store_true", help="print the models this runner runs and exit")
    parser.add_argument("--count-flops", action="store_true",
                        help="write one step's FLOPs of the job's model (counted_flops.schema.json) to --out instead "
                             "of running it (the agent asks this for runners that count none, docs/models.md)")
    parser.add_argument("--write-initial-weights", metavar="FILE",
                        help="write the job's model's initial weights (its seed), named as its library names them, "
                             "to FILE instead of running it (`torchsweep weights`, docs/frameworks.md)")
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit_request:
        return EXIT_OK if exit_request.code == 0 else EXIT_INVALID
    if arguments.list_models:
        list_models(name, make_framework)
        return EXIT_OK
    if arguments.version:
        framework = make_framework()
        print(f"{parser.prog} {build_info.VERSION} ({build_info.COMMIT})")
        print(" ".join(f"{name} {version or 'none'}" for name, version in framework.versions().items()))
        # What it runs: read by agents for their capabilities, checked at submit.
        print("modes " + " ".join(framework.MODES))
        print("precisions " + " ".join(framework.PRECISIONS))
        print("tasks " + " ".join(framework.TASKS))
        # Where its packages are: the agent keeps its probes while none of these changes (docs/environments.md).
        print("site " + json.dumps([path for path in sys.path if os.path.isdir(path)]))
        return EXIT_OK
    log = logger(parser.prog)
    if not arguments.job or not (arguments.out or arguments.write_initial_weights):
        log.error("--job and --out (or --write-initial-weights) are required")
        return EXIT_INVALID
    try:
        text = sys.stdin.read() if arguments.job == "-" else open(arguments.job).read()
        document = json.loads(text)
        if not isinstance(document, dict):
            raise InvalidJob("", "the job document must be a JSON object")
        job = resolve_job(document, name)
    except (OSError, ValueError) as error:
        log.error(f"invalid job: {arguments.job}: {error}")
        return EXIT_INVALID
    except InvalidJob as error:
        log.error(f"invalid job: {error}")
        return EXIT_INVALID

    framework = make_framework()
    if arguments.write_initial_weights:
        return write_initial_weights(framework, job, arguments.write_initial_weights, log)
    if arguments.count_flops:
        return count_flops(framework, job, arguments.out, log)
    result = {"schema_version": 1, "status": "ok", "runner": {"name": name, "version": build_info.VERSION},
              "job": job, "warnings": [], "started_at": utc_now()}
    framework.beside_result = os.getcwd() if arguments.out == "-" else os.path.dirname(os.path.abspath(arguments.out))
    try:
        framework.run(job, result)
    except InvalidJob as error:  # what only the built model tells (an hf: model's positions)
        log.error(f"invalid job: {error}")
        return EXIT_INVALID
    except Unsupported as error:
        result.update(status="unsupported", error=str(error))
    except Exception as error:  # noqa: BLE001 - the job failed; the result says why
        result.update(status="failed", error=f"{type(error).__name__}: {error}")
    if result["status"] != "ok":
        for section in ("execution", "timing", "loss", "memory"):
            result.pop(section, None)
        log.error(f"job {result['status']}: {result['error']}")
    result["context"] = dict(environment.host_context(), **framework.context())
    result["finished_at"] = utc_now()
    write_result(arguments.out, result)
    return EXIT_OK if result["status"] == "ok" else EXIT_FAILED


def list_models(name, make_framework):
    """--list-models, in the worker's layout: a header, then one model a
    line, its name first. A library whose names are the library's word is
    listed name by name, as this environment's version of it has them (none
    where it is not installed); one whose names are the user's (files and
    modules under the agent's --model-path) as LIBRARY:*."""
    print(f"{'model':<12} description (defaults)")
    for model, entry in sorted(model_catalogue().items()):
        print(f"{model:<12} {entry['description']} {json.dumps(entry['defaults'])}")
    framework = None
    for library, entry in sorted(model_libraries().items()):
        if name not in entry["runners"]:
            continue
        if entry.get("under_model_path"):
            print(f"{library + ':*':<12} {entry['description']} {json.dumps(entry['defaults'])}")
            continue
        framework = framework or make_framework()
        for model in framework.library_models(library):
            print(f"{library}:{model}")


def count_flops(framework, job, out, log):
    """--count-flops: the framework's count of one step of the job's model."""
    if not hasattr(framework, "count_flops"):
        log.error("invalid job: this runner counts no FLOPs")
        return EXIT_INVALID
    try:
        counted = framework.count_flops(job)
    except Exception as error:  # noqa: BLE001 - the model's failure: said, nothing written
        log.error(f"FLOPs not counted: {type(error).__name__}: {error}")
        return EXIT_FAILED
    write_result(out, counted)
    return EXIT_OK


def write_initial_weights(framework, job, path, log):
    """--write-initial-weights: the framework's model's weights at the job's seed."""
    if not hasattr(framework, "write_initial_weights"):
        log.error("invalid job: this runner writes no initial weights (the LibTorch worker writes the built-in "
                  "models', the torch-compile runner a library's and the user's)")
        return EXIT_INVALID
    try:
        count = framework.write_initial_weights(job, path)
    except (Unsupported, RuntimeError) as error:  # the model's failure: said, nothing written
        log.error(f"initial weights not written: {type(error).__name__}: {error}")
        return EXIT_FAILED
    log.info(f"wrote the initial weights of {job['model']} (seed {job['seed']}): {count} tensors to {path}")
    return EXIT_OK


def run_main(name, make_framework):
    """The program's entry point: main() with the contract's exit 1 for
    anything the harness did not expect."""
    try:
        sys.exit(main(sys.argv[1:], name, make_framework))
    except Exception as error:  # noqa: BLE001 - the contract's exit 1
        logger(os.path.basename(sys.argv[0])).error(f"internal error: {type(error).__name__}: {error}")
        sys.exit(EXIT_INTERNAL)
