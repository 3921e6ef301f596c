"""The shell target, `serve.sh`: exports and `exec vllm serve`, or a switch over node ranks."""

from __future__ import annotations

from collections.abc import Sequence

from spark_dsl import catalog
from spark_dsl.plan import weights
from spark_dsl.plan.drain import drain_budget
from spark_dsl.plan.model import Launch
from spark_dsl.targets import node_address, placeholders, ports, staging
from spark_dsl.targets.common import Job, TargetError, describe_secret
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import command_lines, expansion_text, joined, quote, word

FILE_NAME = "serve.sh"

# The positional arguments after the rank, by the placeholders a deployment uses.
_ADDRESS_ARGUMENTS = (placeholders.HEAD, placeholders.PREFILL, placeholders.DECODE)
# Placeholders a rank fills itself, on its node.
_OWN = (placeholders.NODE_ADDRESS, placeholders.NODE_INTERFACE)


def secret_checks(launches: Sequence[Launch], indent: str = "") -> list[str]:
    """Fail fast, with the variable's name, when a secret is missing from the environment."""
    seen: dict[str, str] = {}
    for launch in launches:
        for _, ref in launch.secrets:
            seen.setdefault(ref.env_name, describe_secret(ref))
    return [f'{indent}: "${{{name}:?{expansion_text(f"set {name} ({what})")}}}"' for name, what in seen.items()]


def program_check(launch: Launch, indent: str = "") -> list[str]:
    """Stop at once, saying how to install it, when the router's program is not on PATH: vLLM's
    packages and images do not ship `vllm-router`, and a router that fails to start would leave
    the API port silently closed."""
    program = launch.argv[0]
    message = f"spark: {program} is not on PATH; install it with: pip install {catalog.load().router_requirement}"
    return [f"{indent}command -v {quote(program)} >/dev/null || {{ echo {quote(message)} >&2; exit 127; }}"]


def exports(launch: Launch, indent: str = "") -> list[str]:
    """The launch's environment: its values, then secrets read from differently named variables."""
    lines = [f"{indent}export {name}={word(value)}" for name, value in launch.env]
    for name, ref in launch.secrets:
        if ref.env_name != name:
            lines.append(f'{indent}export {name}="${{{ref.env_name}}}"')
    return lines


def render(job: Job) -> str:
    launches = job.launches
    if not launches:
        raise TargetError("the plan has no launch to run")
    if len(launches) == 1 and not _placeholders(launches):
        return _single(job, launches[0])
    return _ranks(job, launches)


def _placeholders(launches: Sequence[Launch]) -> list[str]:
    return placeholders.used([t for launch in launches for t in (*launch.argv, *(v for _, v in launch.env))])


def _single(job: Job, launch: Launch) -> str:
    header = job.header(f"Runs the `{launch.role}` launch of {job.name} on this node.", image=False)
    lines = [
        "#!/usr/bin/env bash",
        *(f"# {line}" for line in header),
        "set -euo pipefail",
        "",
        *secret_checks([launch]),
        *_cache_export(job),
        *_download(job),
        *exports(launch),
        *joined(["exec " + line if i == 0 else line for i, line in enumerate(command_lines(launch.argv))]),
    ]
    return "\n".join(lines) + "\n"


def _cache_export(job: Job, indent: str = "") -> list[str]:
    """`runtime.model_cache` is the cache itself on a host: vLLM and `hf` find it through HF_HOME."""
    cache = job.runtime_value("model_cache")
    return [f"{indent}export HF_HOME={quote(cache)}"] if cache else []


def _download(job: Job, indent: str = "") -> list[str]:
    staged = weights.staging(job.plan)
    if not staged.download or not staged.repositories:
        return []
    return staging.download_lines(staged, indent=indent)


def _ranks_header(job: Job, ranks: list[int], addresses: list[str], used: list[str]) -> list[str]:
    """The comment lines of a script of several node ranks: usage, addresses, interfaces, ports."""
    usage = " ".join(["NODE_RANK", *(f"[{name.removeprefix('SPARK_')}]" for name in addresses)])
    from_env = ", ".join(["SPARK_NODE_RANK", *addresses])
    return job.header(
        f"Runs the launches of one node of {job.name}: {len(ranks)} nodes, ranks 0-{ranks[-1]}.",
        f"Usage: serve.sh {usage}   (or set {from_env} in the environment)",
        *(
            ["Stage the weights first, once, on one node: serve.sh download"]
            if weights.staging(job.plan).download
            else []
        ),
        "Each node binds and advertises its own IPv4 address (set SPARK_NODE_ADDRESS, or"
        f" {node_address.INTERFACE_VARIABLE} to pick the interface); a pool's head defaults to its own address.",
        *(
            [
                "Gloo and NCCL use the interface that holds that address (set SPARK_NODE_INTERFACE for another,"
                " or GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME in serve.env)."
            ]
            if placeholders.NODE_INTERFACE in used
            else []
        ),
        *ports.header_lines(job.plan, job.launches),
        image=False,
    )


def _ranks(job: Job, launches: Sequence[Launch]) -> str:
    used = _placeholders(launches)
    addresses = [name for name in _ADDRESS_ARGUMENTS if name in used]
    unknown = [name for name in used if name not in (*_ADDRESS_ARGUMENTS, *_OWN)]
    if unknown:
        raise TargetError(f"the shell target cannot fill {', '.join(unknown)}")
    ranks = sorted({launch.node_rank for launch in launches})
    header = _ranks_header(job, ranks, addresses, used)
    lines = [
        "#!/usr/bin/env bash",
        *(f"# {line}" for line in header),
        "set -euo pipefail",
        "",
        *node_address.function_lines(),
        *(
            node_address.interface_function_lines(f"; set {placeholders.NODE_INTERFACE}")
            if placeholders.NODE_INTERFACE in used
            else []
        ),
        "",
        'SPARK_NODE_RANK="${1:-${SPARK_NODE_RANK:-}}"',
    ]
    for position, name in enumerate(addresses, start=2):
        lines.append(f'if [ "$#" -ge {position} ]; then {name}="${position}"; fi')
    lines += ["", 'case "$SPARK_NODE_RANK" in']
    download = _download(job, "    ")
    if download:
        # Run once, on one node, before starting any rank: `serve.sh download`.
        token = [
            Launch(launch.role, launch.node_rank, (), (), tuple(s for s in launch.secrets if s[0] == "HF_TOKEN"))
            for launch in launches[:1]
        ]
        lines += ["  download)", *secret_checks(token, "    "), *_cache_export(job, "    "), *download, "    ;;"]
    heads = {pool.first_rank: placeholders.POOL_ADDRESS[pool.role] for pool in job.plan.pools}
    for rank in ranks:
        lines += _rank_branch(
            [launch for launch in launches if launch.node_rank == rank],
            heads.get(rank),
            _cache_export(job, "    "),
            drain_budget(job.plan).stop,
        )
    lines += [
        "  *)",
        f'    echo "serve.sh: the node rank must be one of {" ".join(map(str, ranks))}, '
        "got '${SPARK_NODE_RANK}'\" >&2",
        "    exit 2",
        "    ;;",
        "esac",
    ]
    return "\n".join(lines) + "\n"


def _own_addresses(used: list[str], own_head: str | None) -> list[str]:
    """This node's address (and the interface that holds it, where a launch needs it), and the head
    address of the pool this node leads, unless given."""
    lines = [f'{placeholders.NODE_ADDRESS}="${{{placeholders.NODE_ADDRESS}:-$({node_address.FUNCTION})}}"']
    if placeholders.NODE_INTERFACE in used:
        name, find = placeholders.NODE_INTERFACE, node_address.INTERFACE_FUNCTION
        lines.append(f'{name}="${{{name}:-$({find} "${{{placeholders.NODE_ADDRESS}}}")}}"')
    if own_head in used:
        lines.append(f'{own_head}="${{{own_head}:-${{{placeholders.NODE_ADDRESS}}}}}"')
    return lines


def _rank_branch(launches: Sequence[Launch], own_head: str | None, cache: list[str], stop: int) -> list[str]:
    """One `case` branch: the router in the background, the node's server in the foreground."""
    side = [launch for launch in launches if launch.role == "router"]
    main = [launch for launch in launches if launch.role != "router"]
    if len(main) != 1:
        raise TargetError(f"node rank {launches[0].node_rank} has {len(main)} servers; the shell target runs one")
    server = main[0]
    pad = "    "
    lines = [f"  {server.node_rank})"]
    used = _placeholders(launches)
    own = _own_addresses(used, own_head)
    if any(name in used for name in _OWN) or own_head in used:
        lines += [pad + line for line in own]
    for name in used:
        if name not in (*_OWN, own_head):
            lines.append(f'{pad}: "${{{name}:?set {name} or pass it as an argument}}"')
    lines += secret_checks(launches, pad)
    for launch in side:
        lines += program_check(launch, pad)
        lines.append(f"{pad}# The {launch.role} runs beside this node's server and stops with this script.")
        body = command_lines(launch.argv, pad + "  ")
        env = exports(launch)
        if env:
            lines += [f"{pad}(", *(pad + "  " + line for line in env)]
            lines += joined([f"{pad}  exec {body[0]}", *body[1:]])
            lines.append(f"{pad}) &")
        else:
            lines += joined([f"{pad}{body[0]}", *body[1:]])
            lines[-1] += " &"
        lines += [
            f"{pad}{launch.role}_pid=$!",
            f"{pad}trap 'kill \"${launch.role}_pid\" 2>/dev/null || true' EXIT",
        ]
    lines += cache
    lines += exports(server, pad)
    body = command_lines(server.argv, pad + "  ")
    if not side:
        lines += joined([f"{pad}exec {body[0]}", *body[1:]])
        lines.append(f"{pad};;")
        return lines
    lines += joined([f"{pad}{body[0]}", *body[1:]])
    lines[-1] += " &"
    return [*lines, *_node_lifetime([launch.role for launch in side], pad, stop), f"{pad};;"]


def _ended_note(role: str, pad: str) -> str:
    message = f"serve.sh: the {role} exited ($code); stopping this node"
    return f'{pad}if [ "$ended" = "${role}_pid" ]; then echo "{message}" >&2; fi'


def _node_lifetime(roles: list[str], pad: str, stop: int) -> list[str]:
    """Both run in the background, and the first to end ends the node: a router that gave up
    (its wait for the workers is the ready budget) stops the server with an error, instead of
    leaving the API port closed while the script still seems to serve.

    The script outlives what it stops, within the stop budget (serve.drain + teardown): vLLM
    drains its requests on SIGTERM (`--shutdown-timeout`), and whoever stops the script waits for
    that. A process still running when the budget is spent is killed: a vLLM server that gets
    SIGTERM while it is still starting carries on starting (the real engine does, in
    tests/real_engine/test_pd_router.py), and the script must not wait for it forever."""
    pids = " ".join(f'"${role}_pid"' for role in [*roles, "server"])
    return [
        f"{pad}server_pid=$!",
        f"{pad}# shellcheck disable=SC2329  # called by the EXIT trap below",
        f"{pad}spark_stop() {{  # SIGTERM, then up to {stop}s (serve.drain + teardown) before SIGKILL",
        f'{pad}  kill "$@" 2>/dev/null || true',
        f"{pad}  local waited=0 running",
        f'{pad}  while [ -n "$(jobs -rp)" ] && ((waited < {stop})); do sleep 1; waited=$((waited + 1)); done',
        f'{pad}  running="$(jobs -rp)"',
        f"{pad}  # shellcheck disable=SC2086  # one process id per word",
        f'{pad}  [ -z "$running" ] || kill -KILL $running 2>/dev/null || true',
        f'{pad}  wait "$@" 2>/dev/null || true',
        f"{pad}}}",
        f"{pad}trap 'spark_stop {pids}' EXIT",
        f"{pad}trap 'exit 143' TERM INT",
        f"{pad}code=0",
        f"{pad}wait -n -p ended {pids} || code=$?",
        *(_ended_note(role, pad) for role in [*roles, "server"]),
        f'{pad}exit "$code"',
    ]


TARGET = Target(
    "shell",
    FILE_NAME,
    "a bash script, `serve.sh`, that runs the launch for a rank",
    render,
    executable=True,
    # The model cache is a folder of this host; the download step runs before the launches.
    reads=("runtime.model_cache", "weights.download", "weights.download_timeout"),
)
