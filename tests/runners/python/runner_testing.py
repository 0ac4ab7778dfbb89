"""What the runner tests share: a runner process on a job document, tiny
jobs, an independent validator (python3-jsonschema) of result documents
against schemas/result.schema.json, and the agent's judgement of a runner's
raw result (`torchsweep judge`)."""
import json
import os
import pathlib
import subprocess
import tempfile

import jsonschema
from referencing import Registry, Resource


TINY_MLP = {"schema_version": 1, "model": "mlp", "batch_size": 8, "input_size": 16, "width": 32, "depth": 2,
            "epochs": 2, "warmup": 2, "iters": 3, "threads": 1}
TINY_GPT_GENERATE = {"schema_version": 1, "model": "gpt", "task": "generate", "batch_size": 2, "vocab": 256,
                     "width": 64, "heads": 4, "depth": 2, "seq_len": 32, "prompt_len": 8, "new_tokens": 6,
                     "epochs": 2, "warmup": 1, "threads": 1}


# A user's model with a deliberate graph break: a print between its layers.
BREAKY = """\
import torch


class Breaky(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(16, 32), torch.nn.Linear(32, 10)

    def forward(self, x):
        h = self.first(x)
        print("between the layers")
        return self.second(torch.relu(h))


def build(job):
    return {"module": Breaky(),
            "make_batch": lambda n, device: (torch.randn(n, 16, device=device), torch.randint(10, (n,), device=device))}
"""


class Run:
    """One runner process on a job document, in a directory of its own."""

    def __init__(self, executable, job, extra_env=None, without_torchvision=False):
        self.directory = tempfile.TemporaryDirectory(prefix="ts_runner_")
        folder = pathlib.Path(self.directory.name)
        (folder / "job.json").write_text(json.dumps(job))
        self.progress = folder / "progress.jsonl"
        env = dict(os.environ, TORCHSWEEP_PROGRESS_FILE=str(self.progress), **(extra_env or {}))
        if without_torchvision:
            # A module that fails to import shadows the real torchvision.
            (folder / "torchvision.py").write_text("raise ImportError('hidden by the test')\n")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
        finished = subprocess.run([executable, "--job", str(folder / "job.json"), "--out", str(folder / "result.json")],
                                  capture_output=True, text=True, env=env, timeout=600)
        self.exit_code, self.stderr = finished.returncode, finished.stderr
        result_file = folder / "result.json"
        self.result = json.loads(result_file.read_text()) if result_file.exists() else None


def cpu_has_avx2():
    """x86-64 with AVX2 (this machine): Inductor must vectorise its C++ kernels with it (docs/compiler.md)."""
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    return cpuinfo.exists() and " avx2" in cpuinfo.read_text()


def xla_cache_environment():
    """The variables of XLA's compile caches this test was given (tests/CMakeLists.txt, TS_XLA_CACHES), for a
    runner started with a bare environment."""
    return {name: value for name, value in os.environ.items() if name.startswith("JAX_") or name == "TF_XLA_FLAGS"}


def result_validator(schemas):
    resources = []
    for path in schemas.glob("*.schema.json"):
        contents = json.loads(path.read_text())
        resource = Resource.from_contents(contents)
        resources += [(contents["$id"], resource), (path.name, resource)]
    schema = json.loads((schemas / "result.schema.json").read_text())
    return jsonschema.Draft7Validator(schema, registry=Registry().with_resources(resources))


def judged(torchsweep, result):
    """`result` judged as an agent judges it before it leaves the node
    (agent/judge/: the timing summary, latency, noise, efficiency)."""
    finished = subprocess.run([torchsweep, "judge", "-"], input=json.dumps(result), capture_output=True, text=True)
    if finished.returncode != 0:
        raise AssertionError(f"torchsweep judge failed ({finished.returncode}): {finished.stderr}")
    return json.loads(finished.stdout)
