"""The Slurm target, `job.sbatch`: directives, one `srun` per node rank, a bounded /health wait."""

from __future__ import annotations

from spark_dsl.plan import drain, weights
from spark_dsl.plan.model import Launch, Pool
from spark_dsl.schema import KeySpec, Kind
from spark_dsl.targets import node_address, placeholders, ports, sbatch_options, slurm_node, staging
from spark_dsl.targets.common import MODEL_CACHE, Job, TargetError, api_launches, is_vllm
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell import program_check, secret_checks
from spark_dsl.targets.shell_words import command_lines, joined, quote, word

FILE_NAME = "job.sbatch"
# What a launch binds, advertises and talks to other nodes on: its own node's, from the probe.
_OWN = ((placeholders.NODE_ADDRESS, "node_addresses"), (placeholders.NODE_INTERFACE, "node_interfaces"))
HEALTH_POLL_SECONDS = 2


def slurm_time(seconds: int) -> str:
    """`--time` as `D-HH:MM:SS` (or `HH:MM:SS` under a day); Slurm rounds seconds up to minutes."""
    days, rest = divmod(seconds, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def _directive(option: str, value: str | int | None = None) -> str:
    text = f"--{option}" if value is None else f"--{option}={value}"
    if not text.isprintable():
        raise TargetError(f"`{option}` holds a character that cannot go into an #SBATCH line")
    return f"#SBATCH {text}"


def render(job: Job) -> str:
    plan = job.plan
    if not job.launches:
        raise TargetError("the plan has no launch to run")
    nodes = plan.total_nodes
    directives = [
        _directive("job-name", job.name),
        _directive("nodes", nodes),
        _directive("ntasks-per-node", 1),
        # vLLM's CPU backend asks for no GPU: its ranks are processes on the node's CPUs.
        *([] if plan.accelerator.on_host else [_directive("gpus-per-node", job.gpus)]),
        _directive("exclusive"),
        _directive("time", slurm_time(int(job.setting("time")))),
        # SIGTERM to every step (not the batch shell) a drain and a teardown before the time limit,
        # so vLLM finishes its requests (`--shutdown-timeout`) before the limit's kill (sbatch(1),
        # --signal; Slurm may send it up to 60 s earlier still).
        _directive("signal", f"TERM@{drain.drain_budget(plan).stop}"),
    ]
    for key in ("partition", "account", "qos"):
        value = job.setting(key)
        if value:
            directives.append(_directive(key, value))
    directives += _scheduling(job)
    directives.append(_directive("output", job.setting("output")))
    header = job.header(
        f"Submit with `sbatch {FILE_NAME}` from a folder where the output's folder exists ({job.setting('output')}).",
        _address_note(job),
        *ports.header_lines(job.plan, job.launches),
        image=job.setting("container") != "none",
    )
    lines = [
        "#!/usr/bin/env bash",
        *directives,
        *(f"# {line}" for line in header),
        "set -euo pipefail",
        "",
        *secret_checks(job.launches),
        *_program_checks(job),
        *slurm_node.memlock_check(job),
        *_addresses(job),
        *slurm_node.import_step(job),
        *_download(job),
        "",
        *_node_cpus(job),
        "steps=()",
    ]
    for launch in job.launches:
        lines += _step(job, launch)
    lines += _wait_ready(job)
    lines += _wait_end()
    return "\n".join(lines) + "\n"


def _program_checks(job: Job) -> list[str]:
    """Without a container, the router runs from the nodes' PATH on node rank 0, where this script
    runs: check it is there before any step starts. In an image, the image must have it (SPK547)."""
    if job.setting("container") != "none":
        return []
    return [line for launch in job.launches if not is_vllm(launch) for line in program_check(launch)]


def _scheduling(job: Job) -> list[str]:
    """Node features, a reservation, excluded nodes and the spec's extra directives (checked by
    SPK541-SPK543 first; refused here too, so no value can end or add an `#SBATCH` line)."""
    out = []
    for key in ("constraint", "reservation", "exclude"):
        value = job.setting(key)
        if value:
            if not sbatch_options.safe_value(value):
                raise TargetError(f"`{key}` holds a character that cannot go into an #SBATCH line", code="SPK541")
            out.append(_directive(key, value))
    for text in job.setting("extra_directives") or ():
        reason = sbatch_options.problem(text)
        if reason:
            raise TargetError(f"extra directive {text!r}: {reason}", code="SPK542")
        out.append(f"#SBATCH {text}")
    return out


def _address_note(job: Job) -> str:
    names = ", ".join(dict.fromkeys([placeholders.HEAD, *(name for name, _ in _pool_heads(job))]))
    return (
        "Addresses: each node's own IPv4 address, found on that node (the interface of its default route,"
        f" or {node_address.INTERFACE_VARIABLE}); export {names} to use others for the pools' heads."
    )


def _pool_heads(job: Job) -> list[tuple[str, Pool]]:
    return [(placeholders.POOL_ADDRESS[pool.role], pool) for pool in job.plan.pools]


def _uses(job: Job, name: str) -> bool:
    """Whether any launch's argv or environment holds the placeholder `name`."""
    texts = [t for launch in job.launches for t in (*launch.argv, *(v for _, v in launch.env))]
    return name in placeholders.used(texts)


def _addresses(job: Job) -> list[str]:
    """Every node's own address (and, where a launch needs it, the interface that holds it), probed
    on that node, then each placeholder from the environment or it."""
    nodes = job.plan.total_nodes
    if _uses(job, placeholders.NODE_INTERFACE):
        answer = "`NODE_ID ADDRESS INTERFACE`"
        functions = [*node_address.function_lines(), *node_address.interface_function_lines()]
        report = [
            f'address="$({node_address.FUNCTION})" && interface="$({node_address.INTERFACE_FUNCTION} "$address")"',
            'printf \'%s %s %s\\n\' "$SLURM_NODEID" "${address:-}" "${interface:-}"',
        ]
        read = [
            "node_interfaces=()",
            "while read -r node address interface; do",
            '  if [ -n "$address" ]; then node_addresses[node]="$address"; fi',
            '  if [ -n "$interface" ]; then node_interfaces[node]="$interface"; fi',
        ]
        counted: tuple[tuple[str, str], ...] = ("address", "node_addresses"), ("interface", "node_interfaces")
    else:
        answer = "`NODE_ID ADDRESS`"
        functions = node_address.function_lines()
        report = [f'printf \'%s %s\\n\' "$SLURM_NODEID" "$({node_address.FUNCTION})"']
        read = [
            "while read -r node address; do",
            '  if [ -n "$address" ]; then node_addresses[node]="$address"; fi',
        ]
        counted = (("address", "node_addresses"),)
    lines = [
        f"# One probe per node, run on the node itself (never in the image), answers {answer}.",
        "probe=\"$(cat <<'PROBE'",
        *functions,
        *report,
        "PROBE",
        ')"',
        "node_addresses=()",
        *read,
        f'done < <(srun --nodes={nodes} --ntasks={nodes} --ntasks-per-node=1 bash -c "$probe")',
    ]
    for what, array in counted:
        lines += [
            f'if [ "${{#{array}[@]}}" -ne {nodes} ]; then',
            f'  echo "spark: found the {what} of ${{#{array}[@]}} of {nodes} nodes" >&2',
            "  exit 1",
            "fi",
        ]
    lines.append(f'{placeholders.HEAD}="${{{placeholders.HEAD}:-${{node_addresses[0]}}}}"')
    for name, pool in _pool_heads(job):
        if name != placeholders.HEAD:
            lines.append(f'{name}="${{{name}:-${{node_addresses[{pool.first_rank}]}}}}"')
    return lines


def _address_of(job: Job, launch: Launch) -> str:
    """The shell variable holding the address of the node a launch runs on."""
    for name, pool in _pool_heads(job):
        if launch.role == pool.role and launch.node_rank == pool.first_rank:
            return name
    if launch.node_rank == 0:
        return placeholders.HEAD
    return f"node_addresses[{launch.node_rank}]"


def _cache_env(job: Job) -> list[str]:
    """Without a container, `runtime.model_cache` is the cache itself: `HF_HOME` points there."""
    cache = job.runtime_value("model_cache")
    if cache and job.setting("container") == "none":
        return [f"HF_HOME={quote(cache)}"]
    return []


def _download(job: Job) -> list[str]:
    """The download step, once on the first node, before any launch (`weights.download`)."""
    staged = weights.staging(job.plan)
    if not staged.download or not staged.repositories:
        return []
    options, program = _container(job)
    env = _cache_env(job)
    runner = " ".join(
        ["srun", "--nodes=1", "--ntasks=1", "--relative=0", *options, *program, *(["env", *env] if env else [])]
    )
    return ["", *staging.download_lines(staged, runner)]


def _container(job: Job, image: str | None = None) -> tuple[list[str], list[str]]:
    """(`srun` options, program prefix) that run a launch in the chosen container, if any."""
    kind = job.setting("container")
    cache = job.runtime_value("model_cache")
    image = image or job.image
    if kind == "pyxis":
        options = [f"--container-image={quote(image)}"]
        if cache:
            options.append(f"--container-mounts={quote(f'{cache}:{MODEL_CACHE}')}")
        # One container per node and image, imported once (slurm_node.import_step) and reused.
        options.append(f"--container-name={slurm_node.container_name(job, image)}")
        return options, []
    if kind == "apptainer":
        flag = job.runtime_facts.apptainer_flag  # None: no GPU to reach (vLLM's CPU backend)
        prefix = ["apptainer", "exec", *([flag] if flag else [])]
        if cache:
            prefix.append(f"--bind={quote(f'{cache}:{MODEL_CACHE}')}")
        return [], [*prefix, quote(f"docker://{image}")]
    return [], []


def _node_cpus(job: Job) -> list[str]:
    """`node_cpus[RANK]`: the CPUs the job holds on each node, from SLURM_JOB_CPUS_PER_NODE (sbatch(1):
    counts in the order of SLURM_JOB_NODELIST, the order `--relative` counts in, as `72(x2),36`)."""
    nodes = job.plan.total_nodes
    return [
        "# Each node's CPUs in this job, by node rank: every server step asks for all of its node's.",
        "node_cpus=()",
        'IFS=, read -ra cpu_counts <<<"${SLURM_JOB_CPUS_PER_NODE:?submit this script with sbatch}"',
        'for entry in "${cpu_counts[@]}"; do',
        '  count="${entry%%(*}"',
        "  repeat=1",
        '  if [[ "$entry" == *"(x"* ]]; then',
        '    repeat="${entry#*(x}"',
        '    repeat="${repeat%)}"',
        "  fi",
        '  for ((i = 0; i < repeat; i++)); do node_cpus+=("$count"); done',
        "done",
        f'if [ "${{#node_cpus[@]}}" -ne {nodes} ]; then',
        f'  echo "spark: SLURM_JOB_CPUS_PER_NODE=$SLURM_JOB_CPUS_PER_NODE does not list {nodes} nodes" >&2',
        "  exit 1",
        "fi",
        "",
    ]


def _step(job: Job, launch: Launch) -> list[str]:
    srun = ["srun", "--nodes=1", "--ntasks=1", f"--relative={launch.node_rank}"]
    if is_vllm(launch):
        # Every CPU the job holds on the node. Without it a step gets SRUN_CPUS_PER_TASK per task
        # when that is set (Slurm 22.05 on; SLURM_CPUS_PER_TASK again from 23.11, which `sbatch -c`
        # sets), and with it a step gets exactly that many (srun(1), --cpus-per-task; it implies --exact).
        srun.append(f'--cpus-per-task="${{node_cpus[{launch.node_rank}]}}"')
    else:
        # The router shares its node with that node's server and needs none of its resources.
        srun.append("--overlap")
    options, program = _container(job, None if is_vllm(launch) else job.router_image)
    env = [f"{name}={word(value)}" for name, value in launch.env]
    if is_vllm(launch):
        env += _cache_env(job)
    env += [f'{name}="${{{ref.env_name}}}"' for name, ref in launch.secrets if ref.env_name != name]
    body = command_lines(launch.argv, "  ")
    head = _step_head(srun, options, program, env, body[0])
    indent = "  " if len(head) > 1 else ""  # the program's options under the program's own line
    lines = joined([*head, *(indent + line for line in body[1:])])
    lines[-1] += " &"
    own = []
    used = placeholders.used([*launch.argv, *(value for _, value in launch.env)])
    for name, array in _OWN:
        if name in used:
            own.append(f'{name}="${{{array}[{launch.node_rank}]}}"')
    return [f"# node rank {launch.node_rank}: {launch.role}", *own, *lines, 'steps+=("$!")']


# A step's first line (srun, its options, the container, the environment, the program) longer than
# this is laid out one part per line: a reviewer reads each variable and option on its own line.
STEP_WIDTH = 120


def _step_head(srun: list[str], options: list[str], program: list[str], env: list[str], command: str) -> list[str]:
    """The lines before the program's options: one line when it fits STEP_WIDTH, else srun's own
    options, each container option, the container program, `env` and each variable (aligned under
    the first) and the program, each on a line of its own."""
    line = " ".join([*srun, *options, *program, *(["env", *env] if env else []), command])
    if len(line) <= STEP_WIDTH:
        return [line]
    parts = [*options, *([" ".join(program)] if program else [])]
    if env:
        parts += [f"env {env[0]}", *(f"    {assignment}" for assignment in env[1:])]
    return [" ".join(srun), *(f"  {part}" for part in [*parts, command])]


def ready_timeout(job: Job) -> int:
    """How long the job waits for /health: its own `ready_timeout`, else the ready budget."""
    chosen = job.setting("ready_timeout")
    return int(chosen) if chosen is not None else weights.ready_budget(job.plan).seconds


def _wait_ready(job: Job) -> list[str]:
    timeout = ready_timeout(job)
    urls = [f'"http://${{{_address_of(job, launch)}}}:{launch.port}/health"' for launch in api_launches(job.launches)]
    return [
        "",
        f"# Loading the model takes long: wait up to {timeout}s (the ready budget) for /health.",
        f"deadline=$((SECONDS + {timeout}))",
        f"health_urls=({' '.join(urls)})",
        'for url in "${health_urls[@]}"; do',
        '  until curl -fsS -o /dev/null --max-time 5 "$url"; do',
        '    for step in "${steps[@]}"; do',
        '      if ! kill -0 "$step" 2>/dev/null; then',
        '        echo "spark: a launch ended before $url answered" >&2',
        '        kill "${steps[@]}" 2>/dev/null || true',
        "        exit 1",
        "      fi",
        "    done",
        "    if ((SECONDS >= deadline)); then",
        f'      echo "spark: $url did not answer within {timeout}s" >&2',
        '      kill "${steps[@]}" 2>/dev/null || true',
        "      exit 1",
        "    fi",
        f"    sleep {HEALTH_POLL_SECONDS}",
        "  done",
        "done",
        f'echo "spark: {job.name} is ready"',
    ]


def _wait_end() -> list[str]:
    return [
        "",
        "# The job lasts as long as its launches; the first failure stops the others.",
        "status=0",
        'for _ in "${steps[@]}"; do',
        "  code=0",
        "  wait -n || code=$?",
        '  if [ "$code" -ne 0 ] && [ "$status" -eq 0 ]; then',
        "    status=$code",
        '    kill "${steps[@]}" 2>/dev/null || true',
        "  fi",
        "done",
        'exit "$status"',
    ]


TARGET = Target(
    "slurm",
    FILE_NAME,
    "a Slurm batch script, `job.sbatch`",
    render,
    keys=(
        KeySpec("partition", Kind.STRING, "Slurm partition"),
        KeySpec("account", Kind.STRING, "Slurm account"),
        KeySpec("qos", Kind.STRING, "Slurm quality of service"),
        KeySpec("constraint", Kind.STRING, 'node features the job needs (`--constraint`), e.g. `"gpu&ib"`'),
        KeySpec("reservation", Kind.STRING, "Slurm reservation to run in (`--reservation`)"),
        KeySpec("exclude", Kind.STRING, 'nodes not to use (`--exclude`, a host list), e.g. `"node[1-2]"`'),
        KeySpec(
            "extra_directives",
            Kind.STRING_LIST,
            'more `#SBATCH` options, e.g. `["--mail-type=END"]`: sbatch\'s own, not those spark writes',
        ),
        # The job script, SPK506 and SPK508 read this default (rules through this declaration).
        KeySpec("time", Kind.DURATION, "time limit", fallback=4 * 3600),
        KeySpec(
            "container",
            Kind.SYMBOL,
            "container runtime",
            symbols=("pyxis", "apptainer", "none"),
            fallback="none",
        ),
        KeySpec("output", Kind.STRING, "job output file", fallback="logs/%x-%j.out"),
        # Zero would give up before the first /health poll.
        KeySpec(
            "ready_timeout",
            Kind.DURATION,
            "how long to wait for /health",
            default="the deployment's ready budget (`serve.ready_timeout`)",
            minimum=1,
        ),
    ),
    executable=True,
    elsewhere="the job runs on the cluster's compute nodes, which need not share this machine's folders",
    # The images with `container`; the model cache is a folder of the nodes.
    reads=(
        "runtime.image",
        "runtime.router_image",
        "runtime.model_cache",
        "weights.download",
        "weights.download_timeout",
    ),
)
