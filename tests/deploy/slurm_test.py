#!/usr/bin/env python3
"""deploy/slurm/torchsweep-agents.sbatch against a real Slurm on several hosts (docs/deploy.md).

Run by ctest inside `unshare --net` (loopback only). The test makes its own
cluster there: a bridge with the controller's address, and one network (and
UTS) namespace per node joined to it by a veth pair, each with its own
address and host name. munged, slurmctld (Debian's slurm-wlm 24.11, a
generated slurm.conf: auth/munge on an explicit socket, proctrack/linuxproc,
task/none, cgroups disabled) and a torchsweep coordinator run on the bridge;
one slurmd runs in each node's namespace. `sbatch -N NODES` of the script
starts one agent per node, in that node's namespace. Then:
  - every agent registers under its node's name, from its node's address,
    labelled with the allocation;
  - a sweep over the LibTorch worker completes, every result stored once;
  - with several nodes, a two-node multi-rank job of a sweep (hosts n1, n2)
    runs inside the allocation: the agent's mpirun starts its remote daemon
    through Slurm (srun), one rank per node, MPI over TCP between the
    namespaces, and the replicas end equal; no job queued behind it runs
    beside it on n1 or n2;
  - with a long job running, `scancel` of the allocation ends the agents
    and their runners; the job is queued again (not lost, not failed) once
    the grace period has passed, and the earlier results are all there.
"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from processes import free_port, stop, wait_until  # noqa: E402

BRIDGE, CONTROLLER = "ts-sbridge", "10.233.0.1"


def ip(*argv):
    subprocess.run(["ip"] + list(argv), check=True)


def network_namespace(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def node_address(index):
    return f"10.233.0.{11 + index}"


class Cluster:
    def __init__(self, work, torchsweep, nodes):
        self.work, self.torchsweep, self.nodes = work, torchsweep, nodes
        self.names = [f"n{index + 1}" for index in range(nodes)]
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
        munge_socket = os.path.join(self.work, "munge.socket")
        lines = [
            "ClusterName=torchsweep-test",
            f"SlurmctldHost={socket.gethostname()}({CONTROLLER})",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={munge_socket}",
            "CredType=cred/munge",
            f"SlurmctldPort={free_port(CONTROLLER)}", f"SlurmdPort={free_port(CONTROLLER)}",
            f"StateSaveLocation={self.work}/state", f"SlurmdSpoolDir={self.work}/spool-%n",
            f"SlurmctldPidFile={self.work}/slurmctld.pid", f"SlurmdPidFile={self.work}/slurmd-%n.pid",
            f"SlurmctldLogFile={self.work}/slurmctld.log", f"SlurmdLogFile={self.work}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "ReturnToService=2", "KillWait=5", "SlurmdTimeout=30",
        ]
        for index, name in enumerate(self.names):
            lines.append(f"NodeName={name} NodeHostname={name} NodeAddr={node_address(index)} CPUs={os.cpu_count()} "
                         "State=UNKNOWN")
        lines.append(f"PartitionName=test Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP")
        with open(self.conf, "w") as out:
            out.write("\n".join(lines) + "\n")
        with open(os.path.join(self.work, "cgroup.conf"), "w") as out:
            out.write("CgroupPlugin=disabled\n")
        os.makedirs(os.path.join(self.work, "state"))
        return munge_socket

    def start_node(self, index):
        """slurmd of node `index` in a network and UTS namespace of its own, on the bridge."""
        name, inner, outer = self.names[index], f"ts-snode{index}", f"ts-sport{index}"
        setup = (f"hostname {name}; for i in $(seq 200); do ip link show {inner} >/dev/null 2>&1 && break; "
                 f"sleep 0.05; done; ip link set lo up && ip addr add {node_address(index)}/24 dev {inner} && "
                 f"ip link set {inner} up && exec \"$@\"")
        os.makedirs(os.path.join(self.work, f"spool-{name}"))
        slurmd = self.start(["unshare", "--net", "--uts", "--", "sh", "-c", setup, "sh", "slurmd", "-D", "-N", name,
                             "-f", self.conf], f"slurmd-{name}.out")
        wait_until(lambda: network_namespace(slurmd.pid) not in ("", network_namespace("self")), 10,
                   f"node {name}'s namespace")
        ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        ip("link", "set", outer, "master", BRIDGE)
        ip("link", "set", outer, "up")
        ip("link", "set", inner, "netns", str(slurmd.pid))

    def start_slurm(self):
        ip("link", "add", BRIDGE, "type", "bridge")
        ip("addr", "add", f"{CONTROLLER}/24", "dev", BRIDGE)
        ip("link", "set", BRIDGE, "up")
        munge_socket = self.write_config()
        key = os.path.join(self.work, "munge.key")
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True)
        # One munged serves every node: its socket is a file, and the nodes share the file system.
        self.start(["munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
                    f"--pid-file={self.work}/munged.pid", f"--log-file={self.work}/munged.log",
                    f"--seed-file={self.work}/munged.seed"], "munged.out")
        wait_until(lambda: os.path.exists(munge_socket), 20, "munged's socket")
        self.start(["slurmctld", "-D", "-f", self.conf], "slurmctld.out")
        for index in range(self.nodes):
            self.start_node(index)
        wait_until(lambda: self.slurm("sinfo", "-h", "-N", "-o", "%T").stdout.split() == ["idle"] * self.nodes, 60,
                   "every node idle")

    def start_coordinator(self):
        port_file = os.path.join(self.work, "port")
        self.start([self.torchsweep, "coordinator", "--listen", f"{CONTROLLER}:0", "--port-file", port_file, "--db",
                    self.store(), "--heartbeat-s", "0.5", "--reattach-grace-s", "3"], "coordinator.log")
        wait_until(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 20, "the coordinator")
        self.endpoint = f"{CONTROLLER}:" + open(port_file).read().strip()

    def store(self):
        return os.path.join(self.work, "store.db")

    def rows(self, sql):
        with sqlite3.connect(f"file:{self.store()}?mode=ro", uri=True) as store:
            return store.execute(sql).fetchall()

    def status(self):
        finished = subprocess.run([self.torchsweep, "status", "--json", "--coordinator", self.endpoint],
                                  capture_output=True, text=True)
        return json.loads(finished.stdout) if finished.returncode == 0 else None

    def agents(self):
        return (self.status() or {}).get("agents", [])

    def submit(self, name, fixed, repeats=3):
        path = os.path.join(self.work, name + ".yaml")
        with open(path, "w") as out:
            out.write(f"name: {name}\naxes: {{mode: [eager]}}\nfixed: {json.dumps(fixed)}\nrepeats: {repeats}\n")
        finished = subprocess.run([self.torchsweep, "submit", path, "--coordinator", self.endpoint],
                                  capture_output=True, text=True)
        if finished.returncode != 0:
            sys.exit(f"submit failed: {finished.stderr}")

    def sweep(self, name):
        status = self.status() or {"sweeps": []}
        return next((s for s in status["sweeps"] if s["name"] == name), None)

    def finish(self, name, seconds):
        wait_until(lambda: (self.sweep(name) or {}).get("state") == "done", seconds, f"sweep {name} to finish")

    def stop(self):
        stop(self.processes)
        subprocess.run(["ip", "link", "del", BRIDGE])


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


def check(cluster, args, work):
    work_root = os.path.join(work, "agents")
    os.makedirs(work_root)
    cluster.environment.update(TORCHSWEEP=args.torchsweep, TORCHSWEEP_WORK_ROOT=work_root)
    submitted = cluster.slurm("sbatch", "--parsable", "-N", str(cluster.nodes), f"--output={work}/agents-%j.out",
                              args.sbatch_script, cluster.endpoint, "--no-default-runners", "--runner",
                              "libtorch=" + args.worker, "--peak-probe", "off")
    if submitted.returncode != 0:
        sys.exit(f"sbatch failed: {submitted.stderr}")
    job = submitted.stdout.strip().split(";")[0]

    # One agent per node, under its node's name, from its node's address, labelled with the allocation.
    agents = wait_until(lambda: len(cluster.agents()) == cluster.nodes and cluster.agents(), 60,
                        "every node's agent to register")
    assert sorted(agent["name"] for agent in agents) == cluster.names, agents
    for agent in agents:
        index = cluster.names.index(agent["name"])
        assert agent["address"].rsplit(":", 1)[0] == node_address(index), agent
        assert agent.get("labels", {}).get("slurm_job") == job, agent

    # A sweep completes inside the allocation, every result stored once.
    cluster.submit("short", {"model": "mlp", "batch_size": 8, "epochs": 2, "warmup": 1, "iters": 2},
                   repeats=3 * cluster.nodes)
    cluster.finish("short", 120)
    assert cluster.sweep("short")["jobs"].get("done") == 3 * cluster.nodes, cluster.sweep("short")
    stored = 3 * cluster.nodes
    if cluster.nodes > 1:
        assert cluster.rows("SELECT COUNT(DISTINCT agent) FROM results")[0][0] > 1, "the sweep ran on one node"
        # A two-node job of a sweep, launched inside the allocation, with single-node jobs queued behind it.
        cluster.submit("two-nodes", {"model": "mlp", "batch_size": 8, "gpus": 2, "epochs": 2, "warmup": 1,
                                     "iters": 3, "timeout_s": 120, "hosts": cluster.names[:2]}, repeats=1)
        cluster.submit("behind", {"model": "mlp", "batch_size": 8, "epochs": 2, "warmup": 1, "iters": 2})
        cluster.finish("two-nodes", 120)
        cluster.finish("behind", 120)
        # Nothing else ran on the two nodes while it did.
        sharing = cluster.rows(
            "SELECT behind.agent FROM jobs behind JOIN sweeps s ON behind.sweep_id = s.sweep_id, jobs two "
            "JOIN sweeps t ON two.sweep_id = t.sweep_id WHERE s.name = 'behind' AND t.name = 'two-nodes' "
            f"AND behind.agent IN ('{cluster.names[0]}', '{cluster.names[1]}') "
            "AND behind.started_at < two.finished_at AND behind.finished_at > two.started_at")
        assert not sharing, f"jobs ran beside the two-node job on {sharing}"
        distributed = cluster.rows(
            "SELECT json_extract(document, '$.execution.distributed.nodes'), "
            "json_extract(document, '$.execution.distributed.ranks'), "
            "json_extract(document, '$.execution.distributed.replicas_identical') "
            "FROM result_documents JOIN results USING (job_id, attempt) WHERE results.gpus = 2")
        assert distributed == [(2, 2, 1)], (distributed, cluster.rows("SELECT state, last_error FROM jobs"))
        stored += 4

    # scancel with a long job running: the agents and their runners end, the job is queued again.
    cluster.submit("long", {"model": "mlp", "batch_size": 8, "epochs": 1000, "warmup": 1, "iters": 200,
                            "timeout_s": 3600})
    wait_until(lambda: workers_alive(work_root), 60, "the long job's runner to start")
    cancelled = cluster.slurm("scancel", job)
    assert cancelled.returncode == 0, cancelled.stderr
    wait_until(lambda: not cluster.slurm("squeue", "-h", "-j", job).stdout.strip(), 60, "the allocation to end")
    wait_until(lambda: cluster.status() is not None and not cluster.agents(), 30, "the agents to leave")
    wait_until(lambda: not workers_alive(work_root), 30, "the runners to end")
    wait_until(lambda: (cluster.sweep("long") or {}).get("jobs", {}).get("queued") == 3, 30,
               "the long sweep's jobs to be queued again")
    assert not (cluster.sweep("long")["jobs"].get("failed")), cluster.sweep("long")
    assert cluster.rows("SELECT COUNT(*), COUNT(DISTINCT job_id) FROM results") == [(stored, stored)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--sbatch-script", required=True)
    parser.add_argument("--nodes", type=int, default=3)
    args = parser.parse_args()
    os.environ["TORCHSWEEP_TOKEN"] = "slurm-test-token"  # off loopback the coordinator demands one
    work = tempfile.mkdtemp(prefix="ts-slurm-")
    os.chmod(work, 0o755)  # slurmd's job steps read the script from its spool; munged wants no world-writable dir
    cluster = Cluster(work, args.torchsweep, args.nodes)
    failed = True
    try:
        cluster.start_slurm()
        cluster.start_coordinator()
        check(cluster, args, work)
        failed = False
        print(f"the sbatch script's {args.nodes} agents registered, ran the sweeps and ended with their allocation")
    finally:
        cluster.stop()
        if failed:
            for name in sorted(os.listdir(work)):
                if name.endswith((".log", ".out")):
                    print(f"--- {name}\n" + open(os.path.join(work, name), errors="replace").read()[-4000:])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
