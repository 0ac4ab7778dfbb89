#!/usr/bin/env python3
"""torchsweep-torch-compile: the torch.compile runner.

Honours the worker contract of docs/worker.md exactly like torchsweep-worker,
through the harness every Python runner shares (torchsweep_harness, installed
in share/torchsweep/python beside the binaries): the same job document, result
document, exit codes and methodology. What is its own (the harness's pytorch
subpackage): PyTorch's models (the worker's, torchvision's ResNets when
torchvision is installed, any torchvision:NAME, timm:NAME or hf:TYPE model its
environment's library builds, and the user's own: python:MODULE:FACTORY and
torchscript:FILE), its step in eager mode or under torch.compile
(TorchInductor by default), CUDA events and the caching allocator's peaks on
a GPU. This file is the run's order; each step is a module there.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness import accuracy, data  # noqa: E402
from torchsweep_harness.contract import Framework, logger, run_main  # noqa: E402
from torchsweep_harness.errors import InvalidJob, Unsupported  # noqa: E402
from torchsweep_harness.measure import (HostClock, RssProbe, measure, measure_generation, prepare,  # noqa: E402
                                        record_measurements)
from torchsweep_harness.pytorch.accuracy_gate import accuracy_check  # noqa: E402
from torchsweep_harness.pytorch.compile_diagnostics import (CompileCache, InductorFallbacks,  # noqa: E402
                                                            check_compile_options, compile_section)
from torchsweep_harness.pytorch.data_loader import DataLoaderPipeline  # noqa: E402
from torchsweep_harness.pytorch.experiment import Experiment, apply_math_policy, execution_section  # noqa: E402
from torchsweep_harness.pytorch.flops import counted_flops  # noqa: E402
from torchsweep_harness.pytorch.generation import WholeGenerations  # noqa: E402
from torchsweep_harness.pytorch.inductor_cpu import InductorCpu  # noqa: E402
from torchsweep_harness.pytorch import weights  # noqa: E402
from torchsweep_harness.pytorch.library_models import library_models  # noqa: E402
from torchsweep_harness.pytorch.models import build_model  # noqa: E402
from torchsweep_harness.pytorch.probes import CudaEventClock, CudaMemoryProbe  # noqa: E402
from torchsweep_harness.pytorch.profile import profile_steps  # noqa: E402
from torchsweep_harness.pytorch.shapes import check_shapes, shape_sweep  # noqa: E402

RUNNER_NAME = "torch-compile"
log = logger("torch-compile")


class TorchCompile(Framework):
    TASKS = ("train", "infer", "generate")

    def __init__(self):
        import torch
        self.torch = torch

    def versions(self):
        cudnn = self.torch.backends.cudnn
        return {"torch": self.torch.__version__, "cuda": self.torch.version.cuda,
                "cudnn": str(cudnn.version()) if cudnn.is_available() else None}

    def count_flops(self, job):
        return counted_flops(self.torch, job)

    def library_models(self, library):
        return library_models(library)

    def write_initial_weights(self, job, path):
        self.torch.manual_seed(job["seed"])  # as the experiment builds it
        model, _ = build_model(self.torch, job)
        return weights.write(model, path)

    def run(self, job, result):
        torch = self.torch
        from torch._dynamo.utils import compilation_time_metrics, counters, guard_failures
        warnings = result["warnings"]
        torch.set_num_threads(job["threads"])
        if job["interop_threads"] > 0:
            try:
                torch.set_num_interop_threads(job["interop_threads"])
            except RuntimeError as error:
                warnings.append(f"interop_threads not applied: {error}")
        if job["gpus"] > 1:
            raise Unsupported(f"gpus = {job['gpus']}: this runner runs one process on one device")
        if job["mode"] == "graph":
            raise Unsupported("mode graph is the tensorflow runner's (tf.function without XLA); this runner runs "
                              "eager and compiled")
        compiled = job["mode"] == "compiled"
        check_shapes(job)
        if compiled:
            check_compile_options(torch, job)
        # Before anything compiles: the caches, the fallbacks' counter, the CPU kernels' link.
        cache = CompileCache(job, os.path.realpath(__file__)) if compiled else None
        fallbacks = InductorFallbacks() if compiled else None
        kernels = InductorCpu(torch, job) if compiled else None
        torch._dynamo.reset()
        counters.clear()
        guard_failures.clear()
        compilation_time_metrics.clear()
        # Before any model: the process's baseline.
        probe = CudaMemoryProbe(torch, job["device"]) if job["device"].startswith("cuda") else RssProbe()
        math = apply_math_policy(torch, job)
        if job["task"] == "generate":
            return self.generate(job, result, probe, (cache, fallbacks, kernels), math)
        # One pipeline, whatever mode the experiment ends up in.
        feed = data.Feed(job, lambda tree, corrupt: DataLoaderPipeline(
            torch, job, torch.device(job["device"]), tree, corrupt)) if data.reads_folder(job) else None
        experiment, timing, losses, fallback_reason = prepare(
            lambda mode: Experiment(torch, job, mode == "compiled", feed), job, warnings, log, "torch.compile",
            reset=torch._dynamo.reset)
        # What compiling did, before the timed epochs.
        dynamo = compile_section(torch, job, cache, fallbacks, kernels, timing.get("first_iteration_seconds"),
                                 warnings) if compiled else None

        # Timed epochs: the worker's timed region and clocks; memory in phases.
        clock = (CudaEventClock(torch, experiment.device, job["iters"]) if experiment.device.type == "cuda"
                 else HostClock())
        epoch_final, memory, data_report = measure(experiment, clock, probe, job, timing)
        if job["profile"]:  # after the timed epochs, before anything that compiles again
            result["profile"] = profile_steps(torch, experiment, job, self.beside_result)

        ran_compiled = experiment.compiled
        result["execution"] = execution_section(job, experiment, ran_compiled, fallback_reason, dynamo, math)
        if job.get("shapes"):
            result["shapes"] = shape_sweep(torch, experiment, job)
        if compiled:  # last: a step that draws random numbers compiles again for it
            result["accuracy"] = accuracy_check(torch, experiment, job) if ran_compiled else accuracy.skipped(
                f"fell back to eager: {fallback_reason}")
        if ":" in job["model"]:  # a library's model: no formula in schemas/models.json, so counted
            try:
                result["execution"]["counted_flops"] = counted_flops(torch, job)
            except Exception as error:  # noqa: BLE001 - the run stands; only its efficiency is missing
                warnings.append(f"FLOPs not counted on the meta device: {type(error).__name__}: {error}")
        if ran_compiled and dynamo["graph_breaks"]:
            warnings.append(f"{dynamo['graph_breaks']} graph break(s): part of the model ran eagerly between graphs")
        if experiment.scaler:
            result["execution"]["loss_scaling"] = {"initial_scale": float(job["loss_scale_initial"]),
                                                   "final_scale": experiment.scaler.get_scale(),
                                                   "skipped_steps": int(experiment.skipped_steps.item())}
        record_measurements(result, timing, losses, epoch_final, memory, data_report)

    def generate(self, job, result, probe, compiling, math):
        """Task generate: warm-up generations, then the timed ones; compiled,
        the gate after them: eager greedy decoding of the last prompt from
        the same weights must give the same tokens (docs/language-models.md)."""
        torch = self.torch
        compiled, warnings = job["mode"] == "compiled", result["warnings"]
        experiment = Experiment(torch, job, compiled=False)
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(job["precision"], torch.float32)
        timing, fallback_reason = {}, None
        clock = (CudaEventClock(torch, experiment.device, job["new_tokens"]) if experiment.device.type == "cuda"
                 else HostClock())
        with torch.no_grad():
            generation = experiment.model.generation(job, experiment.device, dtype, compiled)
            try:
                section, (prompt, tokens), memory = measure_generation(generation, clock, probe, job, timing)
            except (Unsupported, InvalidJob):
                raise
            except Exception as error:  # noqa: BLE001 - a compile failure is the job's outcome
                if not compiled or job["fallback"] != "eager":
                    raise
                fallback_reason = f"torch.compile failed: {type(error).__name__}: {str(error).splitlines()[0]}"
                log.warning(f"{fallback_reason}; falling back to eager as the job allows")
                warnings.append(f"compiled mode fell back to eager: {fallback_reason}")
                torch._dynamo.reset()
                timing = {}
                generation = experiment.model.generation(job, experiment.device, dtype, False)
                section, (prompt, tokens), memory = measure_generation(generation, clock, probe, job, timing)
            if job["profile"]:  # after the timed generations; a profiled step is one whole generation
                result["profile"] = profile_steps(torch, WholeGenerations(generation), job, self.beside_result)
            tokens = torch.cat(tokens, 1)
            section.update(cache=generation.cache_kind(), kv_cache_bytes=generation.kv_cache_bytes(),
                           tokens=tokens[0].tolist(), matches_eager=None, first_mismatch=None)
            if generation.compiled:
                eager = experiment.model.generation(job, experiment.device, dtype, False).generate(prompt)
                differ = (eager != tokens).any(0).nonzero()
                section["matches_eager"] = differ.numel() == 0
                if differ.numel():
                    section["first_mismatch"] = int(differ[0])
                    warnings.append(f"compiled greedy decoding differs from eager from new token {int(differ[0])} on "
                                    "(same weights and prompt): the compiled model computes something else")
        result["execution"] = execution_section(job, experiment, generation.compiled, fallback_reason,
                                                compile_section(torch, job, *compiling,
                                                                timing.get("first_iteration_seconds"), warnings)
                                                if compiled else None, math)
        result["generation"] = section
        record_measurements(result, timing, {"first_step": None, "second_step": None, "reference_eval": None},
                            [None] * job["epochs"], memory, None)

    def context(self):
        torch = self.torch
        gpus = []
        if torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                properties = torch.cuda.get_device_properties(index)
                gpus.append({"index": index, "name": properties.name, "memory_bytes": properties.total_memory})
        return {"torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                "cudnn_version": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
                "gpu_driver": None, "gpu_count": len(gpus), "gpus": gpus,
                "intra_op_threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads()}


if __name__ == "__main__":
    run_main(RUNNER_NAME, TorchCompile)
