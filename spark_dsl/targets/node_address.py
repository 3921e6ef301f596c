"""The bash that finds, on a node, the IPv4 address its launches bind and advertise.

A host name is never used: on Debian and Ubuntu a host's own name maps to 127.0.1.1 in
/etc/hosts, so a socket bound "on the host name" listens on loopback and no other node
reaches it. The address is the one vLLM itself would pick (`vllm/utils/network_utils.py`,
`get_ip()`: the source address of the default route), read with iproute2 instead of a UDP
socket so the scripts need no Python; `SPARK_ADDRESS_INTERFACE` picks another interface
(the fast fabric's, say) on every node.

`spark_node_interface ADDRESS` names the interface that holds that address, for Gloo's and NCCL's
sockets (`GLOO_SOCKET_IFNAME`, `NCCL_SOCKET_IFNAME`): without it Gloo binds what the host name
resolves to (torch's `ProcessGroupGloo.cpp`, `createDefaultDevice`), 127.0.1.1 again.
"""

from __future__ import annotations

FUNCTION = "spark_node_address"
INTERFACE_FUNCTION = "spark_node_interface"
INTERFACE_VARIABLE = "SPARK_ADDRESS_INTERFACE"

# `ip -4 route show default` prints `default via GW dev DEV ...`; `ip -4 -o addr show` one line per
# address with `ADDR/PREFIX` in field 4. Loopback addresses have host scope, so `scope global`
# never yields 127.x unless an interface is named explicitly.
_BODY = f"""\
{FUNCTION}() {{
  local dev="${{{INTERFACE_VARIABLE}:-}}" scope="" address
  if [ -z "$dev" ]; then
    dev="$(ip -4 route show default | awk '{{ for (i = 1; i < NF; i++) if ($i == "dev") {{ print $(i + 1); exit }} }}')"
    scope="global"
  fi
  address="$(ip -4 -o addr show ${{dev:+dev "$dev"}} ${{scope:+scope "$scope"}} |
    awk '{{ split($4, a, "/"); print a[1]; exit }}')"
  if [ -z "$address" ]; then
    echo "spark: no IPv4 address found on $(hostname)${{dev:+ ($dev)}}; set {INTERFACE_VARIABLE}" >&2
    return 1
  fi
  printf '%s\\n' "$address"
}}"""
# Field 2 of `ip -4 -o addr show` is the device (an address's label, `eth0:1`, comes last), so the
# name is the one Gloo and NCCL look up; the address is compared whole, never as a pattern.
_INTERFACE_BODY = f"""\
{INTERFACE_FUNCTION}() {{
  local interface
  interface="$(ip -4 -o addr show |
    awk -v address="$1" '{{ split($4, a, "/"); if (a[1] == address) {{ print $2; exit }} }}')"
  if [ -z "$interface" ]; then
    echo "spark: no interface of $(hostname) holds $1{{hint}}" >&2
    return 1
  fi
  printf '%s\\n' "$interface"
}}"""


def function_lines() -> list[str]:
    """The definition of `spark_node_address`, which prints this node's IPv4 address or fails."""
    return [
        f"# This node's own IPv4 address (never a host name, which may resolve to 127.0.1.1);"
        f" {INTERFACE_VARIABLE} picks the interface.",
        *_BODY.splitlines(),
    ]


def interface_function_lines(hint: str = "") -> list[str]:
    """The definition of `spark_node_interface ADDRESS`, which prints the name of the interface
    holding ADDRESS on this node or fails, its message ending in `hint` (plain words: it goes
    inside double quotes)."""
    body = _INTERFACE_BODY.replace("{hint}", hint)
    return ["# The interface that holds an address of this node (Gloo's and NCCL's).", *body.splitlines()]
