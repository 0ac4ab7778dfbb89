"""PyTorch probes of scripts/gpu-visit that need no torchsweep build, run
by the node's own Python:

    probe_torch.py tools                      versions and the fp32 math defaults (JSON)
    probe_torch.py tf32 --device D            an fp32 product's error against float64, TF32 off and on
    probe_torch.py load --device D --n N --seconds S
        a bf16 matmul load: prints {"pid", "allocated_bytes"} when it holds its memory,
        waits for a line on stdin, then runs S seconds and prints its rate.
"""
import argparse
import json
import os
import sys
import time

import torch


def tools(_):
    cuda = torch.cuda.is_available()
    return {"version": torch.__version__, "cuda": torch.version.cuda, "cuda_available": cuda,
            "device_name": torch.cuda.get_device_name(0) if cuda else "cpu",
            "capability": ".".join(map(str, torch.cuda.get_device_capability(0))) if cuda else None,
            "tf32_matmul": torch.backends.cuda.matmul.allow_tf32, "tf32_cudnn": torch.backends.cudnn.allow_tf32,
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "float32_matmul_precision": torch.get_float32_matmul_precision()}


def relative_error(a, b, reference):
    product = (a @ b).double()
    return float(torch.linalg.norm(product - reference) / torch.linalg.norm(reference))


def tf32(args):
    device = torch.device(args.device)
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(1024, 1024, generator=generator)
    b = torch.randn(1024, 1024, generator=generator)
    reference = (a.double() @ b.double()).to(device)
    a, b = a.to(device), b.to(device)
    before = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        off = relative_error(a, b, reference)
        torch.backends.cuda.matmul.allow_tf32 = True
        on = relative_error(a, b, reference)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    capable = device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0)
    return {"device": str(device), "tf32_capable": capable, "off_error": off, "on_error": on}


def load(args):
    device = torch.device(args.device)
    n = args.n
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    # Ballast, touched, so that NVML's per-process figure has something to match.
    ballast = torch.ones(args.ballast_mib << 20, dtype=torch.uint8, device=device)
    allocated = torch.cuda.memory_allocated(device) if device.type == "cuda" else \
        a.nbytes + b.nbytes + ballast.nbytes
    print(json.dumps({"pid": os.getpid(), "allocated_bytes": allocated}), flush=True)
    sys.stdin.readline()
    c = a @ b  # the first product (cuBLAS's handle, the workspace) stays out of the rate
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    products, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        for _ in range(10):
            c = a @ b
        products += 10
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    del c
    return {"device": str(device), "n": n, "dtype": "bf16", "seconds": seconds, "products": products,
            "flops_per_s": 2.0 * n ** 3 * products / seconds}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("probe", choices=["tools", "tf32", "load"])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--ballast-mib", type=int, default=8192)
    args = parser.parse_args()
    print(json.dumps({"tools": tools, "tf32": tf32, "load": load}[args.probe](args)), flush=True)


if __name__ == "__main__":
    main()
