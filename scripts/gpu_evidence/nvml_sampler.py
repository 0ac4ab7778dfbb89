"""nvidia-smi's (NVML's) per-process memory, sampled while a visit's probes
and jobs run (scripts/gpu-visit); the fake nvidia-smi answers in a dry run."""
import json
import subprocess
import threading
import time


class Sampler:
    """nvidia-smi's per-process memory every quarter second, on a thread; appended to `path`."""

    def __init__(self, env, path):
        self.env, self.path, self.samples = env, path, []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join()
        if self.path:
            with open(self.path, "a") as out:
                out.write("".join(json.dumps(s) + "\n" for s in self.samples))

    def loop(self):
        while not self.stopping.wait(0.25):
            try:
                text = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                       "--format=csv,noheader,nounits"], env=self.env, capture_output=True,
                                      text=True, timeout=10).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            now = time.time()
            for line in text.splitlines():
                pid, used = [field.strip() for field in line.split(",")]
                if pid.isdigit() and used.isdigit():
                    self.samples.append({"t": now, "pid": int(pid), "used_bytes": int(used) << 20})
