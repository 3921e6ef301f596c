# Sourced by every non-interactive bash of a stubbed run (BASH_ENV, which validators.stub_env sets):
# this machine answers `ulimit -l` as a node set up for RDMA does, `unlimited`, which job.sbatch
# checks with a fabric (a test container cannot raise its own RLIMIT_MEMLOCK). Other limits are
# the real ones. tests/targets/test_fabric.py runs the job without it, to see the check refuse.
ulimit() {
  if [ "$*" = "-l" ]; then
    echo unlimited
  else
    builtin ulimit "$@"
  fi
}
