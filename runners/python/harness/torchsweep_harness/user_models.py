"""The user's own models (docs/models.md): python:PACKAGE.MODULE:FACTORY, a
factory in a module, and torchscript:FILE, a saved TorchScript module, both
under job["model_root"], the --model-path directory the agent found them
under. A job names a model; it never carries code. The agent resolved the
root; the path is checked again here, after resolving symbolic links, so a
runner started by hand with a job from elsewhere reads nothing outside it."""
import importlib
import os
import sys
import traceback

from .errors import InvalidJob


def _root(job):
    root = job.get("model_root")
    if not root:
        raise InvalidJob("model_root", f"model {job['model']} is looked up under a --model-path directory, which the "
                                       "agent sets as model_root; this job has none")
    return os.path.realpath(root)


def _under(root, path, model):
    resolved = os.path.realpath(path)
    if os.path.commonpath([root, resolved]) != root:
        raise InvalidJob("model", f"'{model}': {path} lies outside the model root {root}")
    return resolved


def check_path(job):
    """InvalidJob where the job's user model lies outside its model root, or
    the job names none (a python: module's file is checked as it imports)."""
    if job["model"].startswith("torchscript:"):
        torchscript_file(job)
    else:
        _root(job)


def torchscript_file(job):
    """The file of a torchscript:FILE job, resolved under its model root."""
    root = _root(job)
    name = job["model"].partition(":")[2]
    path = _under(root, os.path.join(root, name), job["model"])
    if not os.path.isfile(path):
        raise InvalidJob("model", f"'{job['model']}': no file {name} under the model root {root}")
    return path


def first_lines(error, limit=5):
    """An exception as its type and message and the traceback's innermost two
    frames (the user's code): what a failed result says."""
    where = "".join(traceback.format_list(traceback.extract_tb(error.__traceback__)[-2:])).rstrip()
    text = f"{type(error).__name__}: {error}" + (f"\n{where}" if where else "")
    return "\n".join(text.splitlines()[:limit])


def call_factory(job):
    """What python:PACKAGE.MODULE:FACTORY's FACTORY(job) returns: a mapping or
    an object with `module`, `make_batch` and optionally `loss`, as a dict. A
    module that does not import or a factory that raises is a RuntimeError
    with the error's first lines (a failed result, not a crashed runner)."""
    model = job["model"]
    root = _root(job)
    module_name, _, factory_name = model.partition(":")[2].rpartition(":")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - the user's code: any error fails the job, quoted
        raise RuntimeError(f"{model}: importing {module_name} failed: {first_lines(error)}") from None
    # A module of that name imported from elsewhere (installed, or cached) is not the user's.
    _under(root, getattr(module, "__file__", None) or root + "/?", model)
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise InvalidJob("model", f"'{model}': {module.__file__} has no function {factory_name}")
    try:
        made = factory(dict(job))
    except Exception as error:  # noqa: BLE001 - the user's code
        raise RuntimeError(f"{model}: the factory raised {first_lines(error)}") from None
    get = made.get if isinstance(made, dict) else (lambda key, default=None: getattr(made, key, default))
    parts = {"module": get("module"), "make_batch": get("make_batch"), "loss": get("loss")}
    missing = [key for key in ("module", "make_batch") if parts[key] is None]
    if missing:
        raise RuntimeError(f"{model}: the factory returned no {' and no '.join(missing)} (it returns the module, "
                           "make_batch(batch_size, device) -> (inputs, targets) and optionally loss(output, targets); "
                           "docs/models.md)")
    return parts
