"""A real single-host Slurm cluster for tests (shared/design/VALIDATORS.md sect. 4).

munged, slurmctld and N slurmd (nodes node1..nodeN, 8 fake GPUs each via
gres on mknod'ed char devices) run in the foreground as children of the test
process, on free local ports, with every file under one scratch directory;
nothing under /etc is touched. Clients find it through SLURM_CONF in
:attr:`SlurmCluster.env`. Needs root (mknod, SlurmUser=root) and the Debian
packages slurmctld slurmd slurm-client munge (bash .ci/install-validators.sh).

    c = SlurmCluster(tmpdir, nodes=2).start()
    c.test_only("job.sbatch")            # sbatch --test-only -> Result
    job = c.run_job("job.sbatch", env=stub_env(rec), timeout=60)
    job.state, job.exit_code, job.stdout_path, job.output
    c.stop()                             # cancels jobs, stops daemons by PID,
                                         # kills leftovers, raises if any remain

Node names do not resolve (no /etc/hosts entry): a batch script runs on the
first node, so it reaches the head's services on 127.0.0.1.

Each node has ``cpus_per_node`` CPUs (2 by default, as many as the test machine has), and
``TaskPlugin=task/affinity`` binds every step's tasks to the CPUs Slurm gave
the step, as a production cluster confines them: `nproc` inside a step is the
step's CPU count, not the host's (all nodes bind the same host CPUs).

``SlurmCluster(tmpdir, nodes=3, network=True)`` is the network-faithful form:
each slurmd runs in a network namespace of its own (one veth on a bridge in
the root namespace, where slurmctld listens on the bridge's address), with its
own IPv4 address, a default route, a UTS namespace whose host name is the node
name, and a mount namespace whose /etc/hosts is a Debian-style file
(`127.0.1.1 nodeN` for itself, the other nodes' real addresses). Node i's
interface is `enpIs0`, a different name on each node. Every job
step inherits the node's namespaces, so what binds on one "node" is reachable
from another only on that node's address. Nothing under /etc is touched: the
hosts file is bind-mounted inside the slurmd's private mount namespace.
Addresses come from 198.18.0.0/15 (RFC 2544, reserved for benchmark test
networks), one random /24 per cluster. Needs iproute2 and util-linux.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

try:  # tests/ as a package or as a sys.path entry (pytest's rootdir-less import)
    from .validators import Result, ToolMissing
except ImportError:
    from validators import Result, ToolMissing

DAEMONS = ("munged", "mungekey", "munge", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "scontrol", "sinfo", "squeue", "scancel")
TERMINAL_STATES = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}
GPUS_PER_NODE = 8

SLURM_CONF = """\
# Written by tests/slurm_cluster.py (recipe: shared/design/VALIDATORS.md sect. 4)
ClusterName=spark-test
SlurmctldHost={ctld_host}
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.sock
MailProg=/bin/true
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool-%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
GresTypes=gpu
{nodes_line}
{partitions}
"""
LOCAL_NODES = (
    "NodeName=node[1-{n}] NodeHostname=localhost NodeAddr=127.0.0.1 Port={d_port0}-{d_portn} "
    "CPUs={cpus} RealMemory=1000 Gres=gpu:{gpus} State=UNKNOWN"
)
NETWORK_NODE = (
    "NodeName=node{i} NodeHostname=node{i} NodeAddr={address} Port={port} "
    "CPUs={cpus} RealMemory=1000 Gres=gpu:{gpus} State=UNKNOWN"
)
GRES_CONF = "NodeName=node[1-{n}] Name=gpu File={d}/dev/nvidia[0-{last_gpu}]\n"


@dataclass
class JobInfo:
    """A finished job, from `scontrol show job -o`."""

    job_id: int
    state: str
    exit_code: int
    signal: int
    stdout_path: Path | None
    stderr_path: Path | None
    fields: dict = field(repr=False)
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code == 0

    @property
    def output(self) -> str:
        """The job's stdout file ('' if it does not exist)."""
        if self.stdout_path and self.stdout_path.is_file():
            return self.stdout_path.read_text(errors="replace")
        return ""

    def __str__(self) -> str:
        return (
            f"job {self.job_id}: {self.state} exit={self.exit_code}:{self.signal} "
            f"in {self.elapsed:.1f}s, output {self.stdout_path}:\n{self.output}"
        )


def _port_free(port: int) -> bool:
    for host in ("0.0.0.0", "127.0.0.1"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port_block(count: int, lo: int = 20000, hi: int = 60000, tries: int = 200) -> int:
    """First port of ``count`` consecutive ports free on all interfaces now."""
    rng = random.Random()
    for _ in range(tries):
        base = rng.randrange(lo, hi - count)
        if all(_port_free(base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no block of {count} free ports found")


def _parse_fields(line: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


class SlurmCluster:
    def __init__(
        self,
        directory: str | os.PathLike,
        nodes: int = 2,
        partitions: Sequence[str] = ("gpu",),
        cpus_per_node: int = 2,
        network: bool = False,
    ):
        self.network = Network(nodes) if network else None
        self.d = Path(directory).resolve()
        self.n = nodes
        self.partitions = tuple(partitions)
        self.cpus = cpus_per_node
        self.procs: list[subprocess.Popen] = []
        self.conf = self.d / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.ctld_port = self.d_port0 = 0
        self.started_in: float | None = None

    # ------------------------------------------------------------------ start
    @staticmethod
    def check_installed() -> None:
        missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
        if missing:
            raise ToolMissing(
                f"Slurm/munge tools missing: {' '.join(missing)}; install them with: bash .ci/install-validators.sh"
            )
        if os.geteuid() != 0:
            raise ToolMissing("the test Slurm cluster needs root (mknod, SlurmUser=root)")

    def node_address(self, i: int) -> str:
        """The address other nodes reach node ``i`` (1-based) on."""
        return self.network.address(i) if self.network else "127.0.0.1"

    def start(self, timeout: float = 30) -> SlurmCluster:
        self.check_installed()
        t0 = time.monotonic()
        try:
            self._start(timeout)
        except BaseException:
            self.stop(check=False)
            raise
        self.started_in = time.monotonic() - t0
        return self

    def _start(self, timeout: float) -> None:
        d = self.d
        for sub in ("etc", "state", "log", "run", "dev", "munge"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "munge", 0o755)
        for i in range(1, self.n + 1):
            (d / f"spool-node{i}").mkdir(exist_ok=True)
        for i in range(GPUS_PER_NODE):
            p = d / "dev" / f"nvidia{i}"
            if not p.exists():  # char devices: slurmd accepts them as GPUs, nobody opens them
                os.mknod(p, 0o600 | 0o020000, os.makedev(195, i))
        block = free_port_block(1 + self.n)
        self.ctld_port, self.d_port0 = block, block + 1
        parts = "\n".join(
            f"PartitionName={p} Nodes=node[1-{self.n}] Default={'YES' if i == 0 else 'NO'} MaxTime=INFINITE State=UP"
            for i, p in enumerate(self.partitions)
        )
        if self.network:
            self.network.create(d)
            ctld_host = f"localhost({self.network.bridge_address})"
            nodes_line = "\n".join(
                NETWORK_NODE.format(
                    i=i, address=self.network.address(i), port=self.d_port0 + i - 1, cpus=self.cpus, gpus=GPUS_PER_NODE
                )
                for i in range(1, self.n + 1)
            )
        else:
            ctld_host = "localhost"
            nodes_line = LOCAL_NODES.format(
                n=self.n, d_port0=self.d_port0, d_portn=self.d_port0 + self.n - 1, cpus=self.cpus, gpus=GPUS_PER_NODE
            )
        self.conf.write_text(
            SLURM_CONF.format(
                d=d, ctld_host=ctld_host, ctld_port=self.ctld_port, nodes_line=nodes_line, partitions=parts
            )
        )
        (d / "etc" / "gres.conf").write_text(GRES_CONF.format(d=d, n=self.n, last_gpu=GPUS_PER_NODE - 1))

        key, sock = d / "munge" / "munge.key", d / "munge" / "munge.sock"
        if not key.exists():
            subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
            os.chmod(key, 0o400)
        # --force: pytest's tmp dirs are 0700, munged wants a world-x path to its socket.
        self._spawn(
            [
                "munged",
                "-F",
                "--force",
                f"--socket={sock}",
                f"--key-file={key}",
                f"--pid-file={d}/munge/munged.pid",
                f"--log-file={d}/munge/munged.log",
                f"--seed-file={d}/munge/munged.seed",
            ]
        )
        self._wait(
            lambda: subprocess.run(["munge", "-n", f"--socket={sock}"], capture_output=True).returncode == 0,
            timeout,
            "munged",
        )
        self._spawn(["slurmctld", "-D", "-i"])
        for i in range(1, self.n + 1):
            argv = ["slurmd", "-D", "-N", f"node{i}"]
            self._spawn(self.network.run_on_node(i, argv) if self.network else argv)
        self._wait(
            lambda: (
                len(self.run(["sinfo", "-h", "-N", "-t", "idle", "-o", "%N"]).stdout.split())
                >= self.n * len(self.partitions)
            ),
            timeout,
            f"{self.n} nodes idle",
        )

    def _spawn(self, argv: list[str]) -> None:
        log = self.d / "log" / f"{Path(argv[0]).name}-{len(self.procs)}.out"
        with open(log, "w") as out:  # the child keeps its own descriptor
            self.procs.append(
                subprocess.Popen(
                    argv,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )

    def _wait(self, pred, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(
                        f"{p.args[0]} exited with {p.returncode} while waiting for {what}\n{self.logs()}"
                    )
            if pred():
                return
            time.sleep(0.1)
        raise TimeoutError(f"Slurm cluster: {what} not reached in {timeout}s\n{self.logs()}")

    def logs(self, tail: int = 30) -> str:
        out = []
        for p in sorted((self.d / "log").glob("*")) + sorted((self.d / "munge").glob("*.log")):
            lines = p.read_text(errors="replace").splitlines()[-tail:]
            out.append(f"--- {p}\n" + "\n".join(lines))
        return "\n".join(out)

    # ------------------------------------------------------------------- use
    def run(self, argv: Sequence[str], env: Mapping[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
        """Run a Slurm client against this cluster (SLURM_CONF set)."""
        run_env = dict(self.env, **(env or {}))
        run_env["SLURM_CONF"] = str(self.conf)
        return subprocess.run(list(argv), env=run_env, capture_output=True, text=True, **kw)

    def test_only(
        self,
        script: str | os.PathLike,
        args: Sequence[str] = (),
        cwd: str | os.PathLike | None = None,
    ) -> Result:
        """`sbatch --test-only [args] script`: ok when Slurm would schedule it."""
        script = Path(script).resolve()
        proc = self.run(["sbatch", "--test-only", *args, str(script)], cwd=cwd or script.parent)
        return Result(
            "sbatch --test-only",
            str(script),
            proc.returncode == 0,
            (proc.stdout + proc.stderr).strip(),
            proc.returncode,
        )

    def submit(
        self,
        script: str | os.PathLike,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        cwd: str | os.PathLike | None = None,
    ) -> int:
        script = Path(script).resolve()
        proc = self.run(["sbatch", "--parsable", *args, str(script)], env=env, cwd=cwd or script.parent)
        if proc.returncode != 0:
            raise RuntimeError(f"sbatch {script} failed (rc={proc.returncode}): {proc.stderr.strip()}")
        return int(proc.stdout.strip().split(";")[0])

    def job_fields(self, job_id: int) -> dict[str, str]:
        return _parse_fields(self.run(["scontrol", "show", "job", "-o", str(job_id)]).stdout)

    def wait_job(self, job_id: int, timeout: float = 120, t0: float | None = None) -> JobInfo:
        t0 = time.monotonic() if t0 is None else t0
        end = time.monotonic() + timeout
        while True:
            f = self.job_fields(job_id)
            if f.get("JobState") in TERMINAL_STATES:
                break
            if time.monotonic() > end:
                self.run(["scancel", str(job_id)])
                self._wait_gone([job_id], 15)
                raise TimeoutError(
                    f"job {job_id} not finished in {timeout}s (state "
                    f"{f.get('JobState')}); cancelled.\n{self._info(job_id, f, t0)}"
                )
            time.sleep(0.2)
        return self._info(job_id, f, t0)

    def _info(self, job_id: int, f: dict, t0: float) -> JobInfo:
        code, _, sig = f.get("ExitCode", "0:0").partition(":")
        out, err = f.get("StdOut"), f.get("StdErr")
        return JobInfo(
            job_id,
            f.get("JobState", "?"),
            int(code or 0),
            int(sig or 0),
            Path(out) if out else None,
            Path(err) if err else None,
            f,
            time.monotonic() - t0,
        )

    def run_job(
        self,
        script: str | os.PathLike,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
        args: Sequence[str] = (),
        cwd: str | os.PathLike | None = None,
    ) -> JobInfo:
        """Submit ``script`` (sbatch exports ``env`` to the job: put the stubs on
        its PATH there), wait until it ends, return its :class:`JobInfo`.
        Relative output paths (``#SBATCH --output``) are relative to ``cwd``
        (default: the script's directory); their directories must exist."""
        t0 = time.monotonic()
        job_id = self.submit(script, env=env, args=args, cwd=cwd)
        return self.wait_job(job_id, timeout, t0)

    # ------------------------------------------------------------------ stop
    def _wait_gone(self, job_ids: list[int] | None, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            q = self.run(["squeue", "-h", "-o", "%i %T"])
            if q.returncode != 0:
                return
            live = [
                line
                for line in q.stdout.splitlines()
                if line.strip()
                and (job_ids is None or int(line.split()[0]) in job_ids)
                and line.split()[1] not in TERMINAL_STATES
            ]
            if not live:
                return
            time.sleep(0.2)

    def our_processes(self) -> list[int]:
        """PIDs whose environment carries this cluster's SLURM_CONF: the
        daemons, slurmstepd and every job process (they inherit it)."""
        marker = f"SLURM_CONF={self.conf}".encode()
        pids = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    if marker in f.read().split(b"\0"):
                        pids.append(int(entry.name))
            except OSError:
                continue
        return pids

    def stop(self, check: bool = True) -> None:
        """Cancel running jobs, stop slurmd(s), slurmctld, munged (each by its
        PID), then kill any process still carrying this cluster's SLURM_CONF.
        With ``check``, raise if one survives."""
        alive = any(p.poll() is None for p in self.procs)
        if alive and self.ctld_port:
            self.run(["scancel", "--user", "root"], timeout=15)
            self._wait_gone(None, 15)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs.clear()
        leftovers = self.our_processes()
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 5
        while self.our_processes() and time.monotonic() < end:
            time.sleep(0.1)
        remaining = self.our_processes()
        if self.network:
            self.network.remove()
        if check and remaining:
            raise RuntimeError(f"Slurm cluster left processes behind: {remaining}")


class Network:
    """Network namespaces for the nodes of a network-faithful cluster (see the module doc)."""

    def __init__(self, nodes: int):
        self.n = nodes
        self.tag = f"{random.randrange(16**4):04x}"  # names stay under IFNAMSIZ (15 chars)
        self.subnet = f"198.18.{random.randrange(1, 255)}"
        self.bridge = f"spk{self.tag}br"
        self.bridge_address = f"{self.subnet}.1"
        self.created: list[tuple[str, str]] = []  # ("netns"|"link", name), to remove in reverse

    def address(self, i: int) -> str:
        return f"{self.subnet}.{10 + i}"

    def interface(self, i: int) -> str:
        """The name of node ``i``'s network interface: a different one on each node, as on hosts
        whose NICs are named by their slot, so nothing that assumes one name (`eth0`) passes."""
        return f"enp{i}s0"

    def namespace(self, i: int) -> str:
        return f"spk{self.tag}n{i}"

    def hosts_file(self, d: Path, i: int) -> Path:
        return d / "etc" / f"hosts-node{i}"

    @staticmethod
    def _ip(*args: str) -> None:
        proc = subprocess.run(["ip", *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")

    def create(self, d: Path) -> None:
        if not all(shutil.which(tool) for tool in ("ip", "unshare", "nsenter")):
            raise ToolMissing("the network-faithful cluster needs iproute2 and util-linux (unshare, nsenter)")
        self._ip("link", "add", self.bridge, "type", "bridge")
        self.created.append(("link", self.bridge))
        self._ip("addr", "add", f"{self.bridge_address}/24", "dev", self.bridge)
        self._ip("link", "set", self.bridge, "up")
        for i in range(1, self.n + 1):
            ns, veth = self.namespace(i), f"spk{self.tag}v{i}"
            self._ip("netns", "add", ns)
            self.created.append(("netns", ns))
            nic = self.interface(i)
            self._ip("link", "add", veth, "type", "veth", "peer", "name", nic, "netns", ns)
            self.created.append(("link", veth))
            self._ip("link", "set", veth, "master", self.bridge, "up")
            self._ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", nic)
            self._ip("-n", ns, "link", "set", nic, "up")
            self._ip("-n", ns, "link", "set", "lo", "up")
            self._ip("-n", ns, "route", "add", "default", "via", self.bridge_address)
            # Debian's installer writes `127.0.1.1 <hostname>`: the node's own name is loopback.
            others = [f"{self.address(j)} node{j}" for j in range(1, self.n + 1) if j != i]
            lines = ["127.0.0.1 localhost", f"127.0.1.1 node{i}", *others, f"{self.bridge_address} slurmctld"]
            self.hosts_file(d, i).write_text("\n".join(lines) + "\n")
        # No name server: a lookup the hosts file cannot answer fails at once, and no query leaves
        # the node for the host's resolver.
        (d / "etc" / "resolv-nodes.conf").write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        self._hosts_dir = d

    def run_on_node(self, i: int, argv: list[str]) -> list[str]:
        """``argv`` inside node ``i``: its network namespace, its host name, its /etc/hosts."""
        script = (
            'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf'
            ' && hostname "$3" && shift 3 && exec "$@"'
        )
        hosts = str(self.hosts_file(self._hosts_dir, i))
        resolv = str(self._hosts_dir / "etc" / "resolv-nodes.conf")
        # nsenter, not `ip netns exec`: that remounts /sys, hiding the cgroup tree slurmd needs.
        return [
            "nsenter", f"--net=/run/netns/{self.namespace(i)}",
            "unshare", "--mount", "--uts", "--propagation", "private",
            "sh", "-c", script, "node-setup", hosts, resolv, f"node{i}", *argv,
        ]  # fmt: skip

    def remove(self) -> None:
        for kind, name in reversed(self.created):
            if kind == "netns":
                subprocess.run(["ip", "netns", "del", name], capture_output=True)
            else:
                subprocess.run(["ip", "link", "del", name], capture_output=True)
        self.created.clear()
