"""The job's fp32 math policy (docs/gpu.md): tf32 and cudnn_benchmark, each
framework (the framework's own default), on or off. Each framework sets its
own switches; what the runners share is the record (execution.math) and
XLA's autotuning switch (JAX and TensorFlow)."""
import os
import re

_AUTOTUNE_LEVEL = re.compile(r"--xla_gpu_autotune_level=(\d+)")
_XLA_DEFAULT_AUTOTUNE_LEVEL = 4


def record(job, tf32_matmul, tf32_conv, conv_autotune):
    """execution.math: what the job asked and what the framework then held (None where it cannot tell)."""
    return {"tf32": job["tf32"], "cudnn_benchmark": job["cudnn_benchmark"], "tf32_matmul": tf32_matmul,
            "tf32_conv": tf32_conv, "conv_autotune": conv_autotune}


def xla_autotune(job):
    """Sets XLA's GPU autotuning as cudnn_benchmark asks (XLA_FLAGS, read when
    the backend starts: call before it does); returns whether it is on."""
    flags = os.environ.get("XLA_FLAGS", "")
    if job["cudnn_benchmark"] != "framework":
        level = _XLA_DEFAULT_AUTOTUNE_LEVEL if job["cudnn_benchmark"] == "on" else 0
        flags = " ".join(_AUTOTUNE_LEVEL.sub("", flags).split() + [f"--xla_gpu_autotune_level={level}"])
        os.environ["XLA_FLAGS"] = flags
    levels = _AUTOTUNE_LEVEL.findall(flags)
    return (int(levels[-1]) if levels else _XLA_DEFAULT_AUTOTUNE_LEVEL) > 0
