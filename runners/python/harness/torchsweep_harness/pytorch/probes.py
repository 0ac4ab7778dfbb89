"""The clock and memory probe on a CUDA device, as the LibTorch worker's."""

import time


class CudaEventClock:
    """The worker's step clock on CUDA: a device synchronisation and a host clock
    read at each epoch boundary, steps timed by CUDA event pairs recorded on
    the stream without synchronising. The events are made (and recorded once)
    before the timed epochs, never inside them."""
    name = "cuda_events"

    def __init__(self, torch, device, steps, now=time.perf_counter):
        self.torch, self.device, self.now = torch, device, now
        self.events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(steps)]
        for start, end in self.events:
            start.record()
            end.record()
        torch.cuda.synchronize(device)

    def begin_epoch(self):
        self.torch.cuda.synchronize(self.device)
        self.index, self.epoch_start = 0, self.now()

    def begin_step(self):
        self.events[self.index][0].record()

    def end_step(self):
        self.events[self.index][1].record()
        self.index += 1

    def end_epoch(self):
        self.torch.cuda.synchronize(self.device)
        seconds = self.now() - self.epoch_start
        return seconds, [start.elapsed_time(end) / 1000.0 for start, end in self.events[:self.index]]


class CudaMemoryProbe:
    """The caching allocator's peaks in phases, as the worker's memory_probe:
    the warm-up/compile phase's read and reset at the start of the timed
    phase, then the timed phase's."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, torch.device(device)
        self.report = {}

    def begin_timed_phase(self):
        cuda = self.torch.cuda
        self.report["warmup_peak_allocated_bytes"] = cuda.max_memory_allocated(self.device)
        self.report["warmup_peak_reserved_bytes"] = cuda.max_memory_reserved(self.device)
        cuda.reset_peak_memory_stats(self.device)

    def end(self):
        cuda = self.torch.cuda
        return dict(self.report, source="cuda_allocator", peak_allocated_bytes=cuda.max_memory_allocated(self.device),
                    peak_reserved_bytes=cuda.max_memory_reserved(self.device))
