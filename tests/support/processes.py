"""What the Python tests share when they drive other processes: waiting on
another process's state with a deadline, a free port, and stopping the
processes a test started. Tests add this folder to sys.path:

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
"""
import signal
import socket
import subprocess
import time


def wait_until(condition, seconds, what):
    """Polls `condition` until it returns something true and returns that,
    or fails naming `what` after `seconds`. Another process's state gives no
    event to wait on, hence the short poll."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.2)


def free_port(host="127.0.0.1"):
    """A TCP port free on `host` just now (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def stop(processes, seconds=20):
    """SIGTERM to each process still running, the last started first, then
    waits for all; one that outlives `seconds` is killed."""
    processes = [process for process in reversed(processes) if process is not None]
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
