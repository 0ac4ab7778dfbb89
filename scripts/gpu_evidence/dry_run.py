"""What a CPU dry run of a GPU visit changes in its planned jobs
(scripts/gpu-visit --cpu-dry-run), and the key a job's pack-time resolution
is found by (scripts/gpu-visit-pack, for runners run directly)."""
import json

# What a CPU dry run changes in each planned job: tiny shapes, the MLP for
# ResNet-50 (Inductor compiles a ResNet for minutes on two cores). Steps of a
# few milliseconds, so that the step clock and the epoch's agree within the
# 2% a GPU must meet, and jobs of a second or more, so that the
# quarter-second NVML sampling sees each.
DRY_RUN_JOB = {"device": "cpu", "model": "mlp", "batch_size": 64, "input_size": 256, "num_classes": 10,
               "width": 512, "depth": 2, "epochs": 2, "warmup": 2, "iters": 160, "threads": 2, "timeout_s": 300}
DRY_RUN_GPT = {"device": "cpu", "batch_size": 8, "vocab": 512, "width": 64, "depth": 1, "heads": 2, "seq_len": 32,
               "epochs": 2, "warmup": 2, "iters": 40, "threads": 2, "timeout_s": 300}
DRY_RUN_GENERATE = {"prompt_len": 8, "new_tokens": 16}


def dry_run_job(job):
    """A planned GPU job shrunk for the CPU dry run (DRY_RUN_*); one planned for the CPU runs as planned."""
    job = dict(job)
    if job.get("device", "cpu") == "cpu":
        return job
    if job["model"] == "gpt":
        job.update(DRY_RUN_GPT)
        if job.get("task") == "generate":
            job.update(DRY_RUN_GENERATE)
            job.pop("iters", None)
    else:
        for field in ("input_size", "num_classes", "memory_format"):  # the MLP reads no images
            job.pop(field, None)
        job.update(DRY_RUN_JOB)
    return job


def resolution_key(job):
    """The job as its resolution is filed under: without its identity."""
    return json.dumps({k: v for k, v in job.items() if k not in ("job_id", "attempt")}, sort_keys=True)
