#!/usr/bin/env bash
# A single-node Slurm on this machine, from Debian's packages (munge, slurmctld, slurmd,
# slurm-client; scripts/bootstrap.sh installs them), for trying `stepgen jobs run --backend
# slurm` and for its test (tests/jobs/slurm.sh). Not a production setup: one partition
# `stepgen` over this node with its real CPUs and memory, no accounting, as the user running
# it (root in CI).
#
# usage: scripts/slurm_local.sh start|stop|status [STATE_DIR]
#   start   writes STATE_DIR/slurm.conf, starts munged (if none runs), slurmctld and slurmd,
#           and waits until the node is idle; prints `export SLURM_CONF=...` for the clients.
#   stop    stops the daemons it started (by their pid files in STATE_DIR).
#   STATE_DIR  default /tmp/stepgen-slurm
set -euo pipefail
cmd="${1:-}"; state="${2:-/tmp/stepgen-slurm}"
conf="$state/slurm.conf"
case "$cmd" in
  start)
    for b in munged slurmctld slurmd sinfo sbatch; do
      command -v "$b" > /dev/null || { echo "slurm_local.sh: $b not found (apt-get install munge slurmctld slurmd slurm-client)" >&2; exit 2; }
    done
    mkdir -p "$state/ctld" "$state/d" "$state/log" "$state/munge"
    host="$(hostname -s)"
    cpus="$(nproc)"
    mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))   # leave 1 GiB to the system
    user="$(id -un)"
    cat > "$conf" <<CONF
# Written by scripts/slurm_local.sh: a single-node Slurm for stepgen's job lists.
ClusterName=stepgen
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPort=$(( 6817 + 100 ))
SlurmdPort=$(( 6818 + 100 ))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
KillWait=5
MinJobAge=3600
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=stepgen Nodes=$host Default=YES MaxTime=INFINITE State=UP DefMemPerCPU=$(( mem_mb / cpus ))
CONF
    if ! pgrep -x munged > /dev/null; then
      mkdir -p /run/munge
      munged --force
    fi
    slurmctld -f "$conf"
    slurmd -f "$conf"
    export SLURM_CONF="$conf"
    for _ in $(seq 1 60); do
      if sinfo -h -o '%t' 2> /dev/null | grep -qx idle; then
        echo "export SLURM_CONF=$conf"
        exit 0
      fi
      sleep 1
    done
    echo "slurm_local.sh: the node did not come up idle in 60 s; logs in $state/log:" >&2
    tail -n 20 "$state"/log/*.log >&2 || true
    exit 1 ;;
  stop)
    for d in slurmd slurmctld; do
      if [ -f "$state/$d.pid" ]; then kill "$(cat "$state/$d.pid")" 2> /dev/null || true; fi
    done
    for _ in $(seq 1 50); do
      alive=0
      for d in slurmd slurmctld; do
        [ -f "$state/$d.pid" ] && kill -0 "$(cat "$state/$d.pid")" 2> /dev/null && alive=1
      done
      [ $alive = 0 ] && break
      sleep 0.2
    done
    echo "slurm_local.sh: stopped" ;;
  status)
    SLURM_CONF="$conf" sinfo ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
esac
