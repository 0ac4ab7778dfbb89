"""What the Python tests share when they drive other processes: waiting on
another process's state with a deadline, a free port, stopping the
processes a test started, and a test case that starts them with their logs
in a folder of its own. Tests add this folder to sys.path:

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
"""
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest


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


class ProcessTestCase(unittest.TestCase):
    """A test that starts long-running programs (coordinator, agent, a
    server): each writes its output to NAME.log in the test's own folder
    (self.folder); at the end they are stopped, the last started first, and
    each log's last lines are printed, which ctest shows when the test
    failed (--output-on-failure)."""
    FOLDER_PREFIX = "ts_processes_"

    def setUp(self):
        self.directory = tempfile.TemporaryDirectory(prefix=self.FOLDER_PREFIX)
        self.folder = pathlib.Path(self.directory.name)
        self.processes = []  # (name, process, log)

    def tearDown(self):
        stop([process for _, process, _ in self.processes])
        for name, process, log in reversed(self.processes):
            log.close()
            tail = (self.folder / f"{name}.log").read_text().splitlines()[-20:]
            print(f"---- {name} (exit {process.returncode}), last lines:\n" + "\n".join(tail), file=sys.stderr)
        self.directory.cleanup()

    def start(self, name, command):
        log = open(self.folder / f"{name}.log", "w")
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.processes.append((name, process, log))
        return process

    def read_file(self, name):
        """The stripped text of a file in the test's folder, None while there is none."""
        path = self.folder / name
        return path.read_text().strip() if path.exists() else None
