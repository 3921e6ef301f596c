"""The bash that finds, on a node, the IPv4 address its launches bind and advertise.

A host name is never used: on Debian and Ubuntu a host's own name maps to 127.0.1.1 in
/etc/hosts, so a socket bound "on the host name" listens on loopback and no other node
reaches it. The address is the one vLLM itself would pick (`vllm/utils/network_utils.py`,
`get_ip()`: the source address of the default route), read with iproute2 instead of a UDP
socket so the scripts need no Python; `SPARK_ADDRESS_INTERFACE` picks another interface
(the fast fabric's, say) on every node.
"""

from __future__ import annotations

FUNCTION = "spark_node_address"
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


def function_lines() -> list[str]:
    """The definition of `spark_node_address`, which prints this node's IPv4 address or fails."""
    return [
        f"# This node's own IPv4 address (never a host name, which may resolve to 127.0.1.1);"
        f" {INTERFACE_VARIABLE} picks the interface.",
        *_BODY.splitlines(),
    ]
