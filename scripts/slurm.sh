#!/usr/bin/env bash
# A single-node Slurm cluster for tests and trials, started by hand: munge,
# slurmctld and slurmd (Debian's slurm-wlm), its state and logs in DIR.
#   scripts/slurm.sh start DIR [CPUS]   prints the SLURM_CONF path; DIR/env holds it too
#   scripts/slurm.sh stop DIR           shuts the cluster down and removes DIR
# CPUS (default 4) may exceed the cores: Slurm is told so (config_overrides), so that
# two workers' 2-rank trials fit at once on a 2-core machine.
set -euo pipefail
cmd=${1:-}; dir=${2:-}; cpus=${3:-4}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR [CPUS] | stop DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "slurm.sh: run as root (slurmd must)" >&2; exit 1; }
command -v slurmctld >/dev/null && command -v munged >/dev/null ||
  { echo "slurm.sh: Slurm is not installed (apt-get install slurm-wlm munge)" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

case $cmd in
start)
  mkdir -p "$dir"/{state,spool,log}
  dir=$(cd "$dir" && pwd)
  host=$(hostname -s)
  # munge: one daemon per machine, shared with any cluster already using it
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    chown munge: /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge: /run/munge /var/log/munge /var/lib/munge
  if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  cat >"$dir/slurm.conf" <<CONF
ClusterName=iotuner
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=pmi2
ReturnToService=2
KillWait=3
InactiveLimit=0
MinJobAge=300
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  for _ in $(seq 100); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    case $state in idle|mixed|allocated) break ;; esac
    sleep 0.1
  done
  case $state in idle|mixed|allocated) ;; *) echo "slurm.sh: node $host is '$state', see $dir/log" >&2; exit 1 ;; esac
  printf 'SLURM_CONF=%q\n' "$SLURM_CONF" >"$dir/env"
  echo "$SLURM_CONF"
  ;;
stop)
  if [ -f "$dir/slurm.conf" ]; then
    export SLURM_CONF=$dir/slurm.conf
    scancel --state=PENDING,RUNNING,SUSPENDED -u root >/dev/null 2>&1 || true
    scontrol shutdown >/dev/null 2>&1 || true
    for f in slurmd slurmctld; do
      pid=$(cat "$dir/$f.pid" 2>/dev/null || true)
      for _ in $(seq 50); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    done
  fi
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start DIR [CPUS] | stop DIR" >&2; exit 2 ;;
esac
