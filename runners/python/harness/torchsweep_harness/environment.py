"""The host's part of a result's context: what every runner reports the same way."""
import os
import platform
import socket

from . import build_info


def cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def host_context():
    return {"hostname": socket.gethostname(), "os": platform.platform(), "kernel": platform.release(),
            "cpu_model": cpu_model(), "cpu_cores_available": len(os.sched_getaffinity(0)),
            "memory_total_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
            "python_version": platform.python_version(),
            "torchsweep_version": build_info.VERSION, "torchsweep_commit": build_info.COMMIT}
