#!/usr/bin/env bash
# Build (or reuse) the venv holding vLLM's real `vllm serve` argument parser, on a CPU-only box.
#
# Only public packages, from the indexes pip is configured with (PyPI by default): torch pinned
# to one release, the vLLM wheel with --no-deps, and the light dependencies that importing the
# parser needs (tools/vllm-parser/README.md says why each). Never `pip install vllm` without
# --no-deps here: it pulls vLLM's own torch pin and the whole CUDA stack (9+ GB).
#
# torch: PyPI's Linux build of torch==2.13.0 is a CUDA build (with nvidia-* wheels, ~4.7 GB in
# the venv); it imports and parses fine on a machine without a GPU, which is all the parser
# needs, so any build of that release is accepted. Where pip finds a CPU build of the same
# release (a CPU wheel index in PIP_EXTRA_INDEX_URL, or a local wheel), it takes that (~2.2 GB).
#
# The vLLM version is NOT written here: it comes from spark_dsl.catalog.VLLM_VERSION.
#
#   SPARK_VLLM_ENV         where the venv goes (default ~/.cache/spark-dsl/vllm-$VERSION)
#   SPARK_VLLM_BASE_PYTHON interpreter used to create it (default python3; 3.11 or newer, and it
#                          must import spark_dsl's catalog from this checkout: pyyaml and pydantic)
#
# On success the last line printed is the venv's interpreter; export it as SPARK_VLLM_PYTHON.
# Exit status is non-zero if anything is missing.
set -euo pipefail
# Everything but the final interpreter path goes to stderr, so that
#   SPARK_VLLM_PYTHON="$(bash tools/vllm-parser/setup-env.sh)"
# captures exactly the path.
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
base_python="${SPARK_VLLM_BASE_PYTHON:-python3}"

# One torch release, whichever build the index serves (see the header). Not vLLM's own pin: the
# parser only needs `import torch` to work.
torch_release="2.13.0"
torch_pin="torch==$torch_release"

started=$(date +%s)
say() { printf '[setup-env %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

version="$(cd "$root" && PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$base_python" -c \
  'from spark_dsl.catalog import VLLM_VERSION; print(VLLM_VERSION)')" \
  || die "cannot read VLLM_VERSION from spark_dsl.catalog (run from a checkout of the project)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "odd VLLM_VERSION: '$version'"

default_env="$HOME/.cache/spark-dsl/vllm-$version"
env_dir="${SPARK_VLLM_ENV:-$default_env}"
py="$env_dir/bin/python"
marker="$env_dir/.spark-dsl-complete"

# One build at a time per venv: a second run (another checkout, a CI run) waits here, then
# finds the venv complete and reuses it.
mkdir -p "$(dirname "$env_dir")"
exec 9>"$env_dir.lock"
if ! flock -n 9; then
  say "another setup-env.sh is building $env_dir; waiting for it"
  flock 9
fi

# What the venv was built from: a change to this script, the constraints or the version rebuilds.
stamp="$(cat "$here/setup-env.sh" "$here/constraints.txt" | sha256sum | cut -c1-16) vllm=$version"

smoke_test() {
  # Build the real parser and parse one good and one bad argv: proves every import works.
  printf '%s' '{"argvs": [["vllm", "serve", "org/model", "--tensor-parallel-size", "2"],
                          ["vllm", "serve", "org/model", "--tensor-parallel", "2"]]}' \
    | "$py" "$root/spark_dsl/data/check_launches.py" \
    | "$py" -c '
import json, sys
v = json.load(sys.stdin)
assert v[0]["ok"] and not v[1]["ok"], v
print("smoke test: parser accepts a good argv and rejects an abbreviation", file=sys.stderr)
'
}

if [[ -f "$marker" && "$(cat "$marker")" == "$stamp" && -x "$py" ]]; then
  say "reusing complete venv $env_dir ($stamp)"
  smoke_test || die "the venv at $env_dir is marked complete but its parser does not work; delete it"
  say "done"
  echo "$py" >&3
  exit 0
fi

if [[ -e "$env_dir" ]]; then
  # Only ever delete a venv (an earlier, incomplete or outdated build), or whatever is at the
  # default path, which is this script's own (a build interrupted while deleting leaves no
  # pyvenv.cfg behind).
  [[ -f "$env_dir/pyvenv.cfg" || "$env_dir" == "$default_env" ]] \
    || die "$env_dir exists and is not a venv; refusing to touch it"
  say "removing incomplete or outdated venv $env_dir"
  mv "$env_dir" "$env_dir.old.$$"  # out of the way at once; a crash now leaves nothing half-done
  rm -rf "$env_dir.old.$$"
fi

say "creating venv $env_dir for vllm==$version"
"$base_python" -m venv "$env_dir"
"$py" -c 'import sys; assert sys.version_info[:2] >= (3, 11), sys.version' \
  || die "$base_python is older than Python 3.11"

cons=(-c "$here/constraints.txt")
pip_install() {
  # Drop the expected noise: misses of local indexes some machines configure, and the "vllm requires ..." list
  # that --no-deps makes inevitable (pip check fails by design; the parser does not care).
  "$py" -m pip install --quiet --disable-pip-version-check --prefer-binary "$@" \
    2> >(grep -v -e 'is ignored: it is neither a file nor a directory' \
                 -e '^vllm [0-9.]* requires ' -e '^xgrammar [0-9.]* requires triton' \
                 -e "^ERROR: pip's dependency resolver does not currently" >&2)
}

say "installing $torch_pin (a CUDA build from PyPI is ~4.7 GB with its nvidia-* wheels)"
pip_install "$torch_pin"

say "installing vllm==$version and xgrammar with --no-deps"
# xgrammar without deps: its own deps pull triton (~1 GB), which the parser never uses.
pip_install --no-deps "vllm==$version" xgrammar "${cons[@]}"

say "installing the light dependencies the parser import needs"
# Lower bounds are what the pinned vLLM imports need; exact versions come from constraints.txt
# (a freeze of a good build).
pip_install "${cons[@]}" -c <(echo "$torch_pin") \
  packaging 'pydantic>=2.12' regex numpy psutil cbor2 'pyzmq>=25' \
  'transformers>=5.16.1,<5.21' 'aiohttp>=3.14.4' 'requests>=2.33' 'oss-harmony>=0.0.11' \
  'openai>=2.25' msgspec cloudpickle 'pillow>=13' pybase64 cachetools uvloop py-cpuinfo \
  'fastapi>=0.133,<0.137' 'prometheus_client>=0.18' partial-json-parser \
  'llguidance>=1.7,<1.8' uvicorn watchfiles 'orjson>=3.11.6' pyyaml apache-tvm-ffi

installed="$("$py" -c 'import importlib.metadata as m; print(m.version("vllm"))')"
[[ "$installed" == "$version" ]] || die "installed vllm is $installed, wanted $version"
build="$("$py" -c 'import sys, torch
assert torch.__version__.split("+")[0] == sys.argv[1], torch.__version__
print(f"CUDA {torch.version.cuda} build (no GPU needed to parse)" if torch.version.cuda else "CPU build")' \
  "$torch_release")" || die "torch does not import, or is not $torch_release (replaced by a dependency?)"
say "torch $torch_release: $build"

say "smoke test"
smoke_test || die "the parser does not build in $env_dir (a dependency is missing?)"

echo "$stamp" > "$marker"
say "done: $(du -sh "$env_dir" | cut -f1) in $env_dir"
echo "$py" >&3
