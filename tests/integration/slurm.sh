#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, from Debian's packages (munge,
# slurmctld, slurmd; Slurm 22.05), everything in one state directory:
#   slurm.sh start DIR   munge key + munged, slurm.conf, slurmctld, slurmd;
#                        waits until the node is idle; writes DIR/slurm.env
#                        (SLURM_CONF, for sbatch/squeue/srun)
#   slurm.sh stop DIR    stops the daemons it started (by their pid files)
# Slurm 22.05 here runs without cgroups: ProctrackType=proctrack/linuxproc,
# TaskPlugin=task/none and no cgroup.conf. Needs root (slurmd starts jobs as
# their user). Ports: free ones, picked at start.
set -euo pipefail
cmd=${1:?start or stop} dir=${2:?state directory}

stop() {
  local f pid
  for f in slurmd slurmctld munged; do
    [ -f "$dir/$f.pid" ] || continue
    pid=$(cat "$dir/$f.pid")
    kill "$pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
    rm -f "$dir/$f.pid"
  done
}

if [ "$cmd" = stop ]; then
  [ -d "$dir" ] && stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: slurm.sh start|stop DIR" >&2; exit 2; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
chmod 0755 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
chmod 0700 "$dir/munge"

# munge: its own key, socket, pid and log files (munged refuses to run as
# root without --force).
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
chmod 0400 "$dir/munge/munge.key"
/usr/sbin/munged --force --key-file="$dir/munge/munge.key" \
  --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"

read -r ctld_port slurmd_port < <(/usr/bin/python3 - << 'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
PY
)
cat > "$dir/slurm.conf" << CONF
ClusterName=ferrytest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
DependencyParameters=kill_invalid_depend
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$dir/slurm.conf
echo "export SLURM_CONF=$SLURM_CONF" > "$dir/slurm.env"
/usr/sbin/slurmctld -c -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 100); do
  state=$(sinfo -h -N -o '%t' 2> /dev/null || true)
  case $state in idle*|mix*|alloc*) exit 0 ;; esac
  sleep 0.2
done
echo "slurm.sh: the node did not come up (state '$state'); logs:" >&2
tail -n 20 "$dir"/*.log >&2
stop
exit 1
