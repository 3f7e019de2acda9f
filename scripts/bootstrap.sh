#!/usr/bin/env bash
# Installs the Debian packages stepgen needs; does nothing when they are all present.
set -euo pipefail
pkgs=(g++ make cmake ninja-build pkgconf ccache python3 zlib1g-dev
      libyaml-cpp-dev libz3-dev z3 libfmt-dev catch2 libcli11-dev nlohmann-json3-dev
      verilator yosys nextpnr-ice40
      libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata  # stepgen import onnx, study onnx-conformance
      python3-torch python3-onnx python3-numpy  # examples/pytorch/export.py (run with /usr/bin/python3)
      procps munge slurmctld slurmd slurm-client  # pkill in tests/jobs; slurm_local.sh (docs/cluster.md)
      linux-perf)  # scripts/profile_rtl.sh (heavy test e2e_rtl_profile_default)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
