#!/usr/bin/env python3
"""deploy/slurm/torchsweep-agents.sbatch against a real Slurm (docs/deploy.md).

Run by ctest inside `unshare --net` (loopback only). The test starts munged,
slurmctld and one slurmd (Debian's slurm-wlm 24.11) with a generated
slurm.conf (auth/munge on an explicit socket, proctrack/linuxproc,
task/none, cgroups disabled), a torchsweep coordinator, and submits the
sbatch script, which starts the agent on the allocation's node. Then:
  - the agent registers under the node's name, labelled with the job id;
  - a sweep over the LibTorch worker completes, every result stored once;
  - with a long job running, `scancel` of the allocation ends the agent
    and its runner; the job is queued again (not lost, not failed) once the
    grace period has passed, and the first sweep's results are all there.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)  # another process's state: no event to wait on
    sys.exit(f"timed out after {seconds} s waiting for {what}")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    def __init__(self, work, torchsweep):
        self.work, self.torchsweep = work, torchsweep
        self.processes = []
        self.conf = os.path.join(work, "slurm.conf")
        self.environment = dict(os.environ, SLURM_CONF=self.conf)

    def start(self, argv, log):
        process = subprocess.Popen(argv, stdout=open(os.path.join(self.work, log), "w"), stderr=subprocess.STDOUT,
                                   env=self.environment)
        self.processes.append(process)
        return process

    def slurm(self, *argv):
        return subprocess.run(argv, capture_output=True, text=True, env=self.environment)

    def write_config(self):
        host = socket.gethostname()
        munge_socket = os.path.join(self.work, "munge.socket")
        lines = [
            "ClusterName=torchsweep-test",
            f"SlurmctldHost={host}(127.0.0.1)",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={munge_socket}",
            "CredType=cred/munge",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            f"StateSaveLocation={self.work}/state", f"SlurmdSpoolDir={self.work}/spool-%n",
            f"SlurmctldPidFile={self.work}/slurmctld.pid", f"SlurmdPidFile={self.work}/slurmd-%n.pid",
            f"SlurmctldLogFile={self.work}/slurmctld.log", f"SlurmdLogFile={self.work}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "ReturnToService=2", "KillWait=5", "SlurmdTimeout=30",
            f"NodeName=n1 NodeHostname={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
            "PartitionName=test Nodes=n1 Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as out:
            out.write("\n".join(lines) + "\n")
        with open(os.path.join(self.work, "cgroup.conf"), "w") as out:
            out.write("CgroupPlugin=disabled\n")
        os.makedirs(os.path.join(self.work, "state"))
        return munge_socket

    def start_slurm(self):
        # The daemons bind with getaddrinfo(AI_ADDRCONFIG), which finds no
        # address family in a namespace with loopback alone: a veth pair (the
        # kernel here has no dummy links) with an address of this namespace's
        # own gives it one.
        for command in (["link", "add", "ts-slurm0", "type", "veth", "peer", "name", "ts-slurm1"],
                        ["addr", "add", "10.233.0.1/24", "dev", "ts-slurm0"], ["link", "set", "ts-slurm1", "up"],
                        ["link", "set", "ts-slurm0", "up"]):
            subprocess.run(["ip"] + command, check=True)
        munge_socket = self.write_config()
        os.makedirs(os.path.join(self.work, "spool-n1"))
        key = os.path.join(self.work, "munge.key")
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True)
        self.start(["munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
                    f"--pid-file={self.work}/munged.pid", f"--log-file={self.work}/munged.log",
                    f"--seed-file={self.work}/munged.seed"], "munged.out")
        wait_until(lambda: os.path.exists(munge_socket), 20, "munged's socket")
        self.start(["slurmctld", "-D", "-f", self.conf], "slurmctld.out")
        self.start(["slurmd", "-D", "-N", "n1", "-f", self.conf], "slurmd.out")
        wait_until(lambda: "idle" in self.slurm("sinfo", "-h", "-o", "%T").stdout, 60, "node n1 idle")

    def start_coordinator(self):
        port_file = os.path.join(self.work, "port")
        self.start([self.torchsweep, "coordinator", "--listen", "127.0.0.1:0", "--port-file", port_file, "--db",
                    os.path.join(self.work, "store.db"), "--heartbeat-s", "0.5", "--reattach-grace-s", "3"],
                   "coordinator.log")
        wait_until(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 20, "the coordinator")
        self.endpoint = "127.0.0.1:" + open(port_file).read().strip()

    def status(self):
        finished = subprocess.run([self.torchsweep, "status", "--json", "--coordinator", self.endpoint],
                                  capture_output=True, text=True)
        return json.loads(finished.stdout) if finished.returncode == 0 else None

    def submit(self, name, fixed):
        path = os.path.join(self.work, name + ".yaml")
        with open(path, "w") as out:
            out.write(f"name: {name}\naxes: {{mode: [eager]}}\nfixed: {json.dumps(fixed)}\nrepeats: 3\n")
        finished = subprocess.run([self.torchsweep, "submit", path, "--coordinator", self.endpoint],
                                  capture_output=True, text=True)
        if finished.returncode != 0:
            sys.exit(f"submit failed: {finished.stderr}")

    def sweep(self, name):
        status = self.status() or {"sweeps": []}
        return next((s for s in status["sweeps"] if s["name"] == name), None)

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def workers_alive(work_root):
    """Runner processes whose command line names a job file under `work_root`."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if "torchsweep-worker" in command and work_root in command:
            alive.append(pid)
    return alive


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--sbatch-script", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ts-slurm-")
    os.chmod(work, 0o755)  # slurmd's job steps read the script from its spool; munged wants no world-writable dir
    cluster = Cluster(work, args.torchsweep)
    failed = True
    try:
        cluster.start_slurm()
        cluster.start_coordinator()
        work_root = os.path.join(work, "agents")
        os.makedirs(work_root)
        cluster.environment.update(TORCHSWEEP=args.torchsweep, TORCHSWEEP_WORK_ROOT=work_root)
        submitted = cluster.slurm("sbatch", "--parsable", "-N", "1", f"--output={work}/agents-%j.out",
                                  args.sbatch_script, cluster.endpoint, "--no-default-runners", "--runner",
                                  "libtorch=" + args.worker, "--peak-probe", "off")
        if submitted.returncode != 0:
            sys.exit(f"sbatch failed: {submitted.stderr}")
        job = submitted.stdout.strip().split(";")[0]

        # The agent registers under its node's name, labelled with the allocation.
        agents = wait_until(lambda: (cluster.status() or {}).get("agents"), 60, "the agent to register")
        agent = agents[0]
        assert agent["name"] == "n1", agent
        assert agent.get("labels", {}).get("slurm_job") == job, agent

        # A sweep completes inside the allocation.
        cluster.submit("short", {"model": "mlp", "batch_size": 8, "epochs": 2, "warmup": 1, "iters": 2})
        wait_until(lambda: (cluster.sweep("short") or {}).get("state") == "done", 120, "sweep short to finish")
        assert cluster.sweep("short")["jobs"].get("done") == 3, cluster.sweep("short")

        # scancel with a long job running: the agent and its runner end, the job is queued again.
        cluster.submit("long", {"model": "mlp", "batch_size": 8, "epochs": 1000, "warmup": 1, "iters": 200,
                                "timeout_s": 3600})
        wait_until(lambda: workers_alive(work_root), 60, "the long job's runner to start")
        cancelled = cluster.slurm("scancel", job)
        assert cancelled.returncode == 0, cancelled.stderr
        wait_until(lambda: not cluster.slurm("squeue", "-h", "-j", job).stdout.strip(), 60, "the allocation to end")
        wait_until(lambda: not (cluster.status() or {"agents": [1]})["agents"], 30, "the agent to leave")
        wait_until(lambda: not workers_alive(work_root), 30, "the runner to end")
        wait_until(lambda: (cluster.sweep("long") or {}).get("jobs", {}).get("queued") == 3, 30,
                   "the long sweep's jobs to be queued again")
        assert not (cluster.sweep("long")["jobs"].get("failed")), cluster.sweep("long")
        exported = subprocess.run([args.torchsweep, "export", "--db", os.path.join(work, "store.db"), "--format",
                                   "json", "--sweep", "short"], capture_output=True, text=True, check=True)
        assert len(json.loads(exported.stdout)) == 3, exported.stdout
        failed = False
        print("the sbatch script's agent registered, ran a sweep and ended with its allocation")
    finally:
        cluster.stop()
        if failed:
            for name in sorted(os.listdir(work)):
                if name.endswith((".log", ".out")):
                    print(f"--- {name}\n" + open(os.path.join(work, name), errors="replace").read()[-4000:])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
