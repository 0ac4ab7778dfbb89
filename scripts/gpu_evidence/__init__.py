"""scripts/gpu-visit's parts: the probes, the checks and the fakes of a CPU dry run (docs/gpu.md)."""
