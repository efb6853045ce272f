#!/bin/bash
# host-runner.sh BED I: keeps one host running, started detached by `testbed/bed up`.
# Each boot gets a fresh network namespace (so unpersisted net.* sysctls are gone after a reboot,
# as on hardware). A reboot from inside the host (`reboot`, exit 133) boots it again; a halt or
# poweroff from inside, or SIGTERM from `bed down`/`bed reboot`, stops it.
set -euo pipefail
export GPUCTL_BED=$1
i=$2
. "$(dirname "$0")/common.sh"
bed_init
. "$LIB_DIR/net.sh"
d=$(host_dir "$i")
echo $$ > "$d/runner.pid"
stop=0 nspawn_pid=
on_term() { stop=1; if [ -n "$nspawn_pid" ]; then kill -TERM "$nspawn_pid" 2>/dev/null || true; fi; }
trap on_term TERM INT
boot=0
while :; do
  boot=$((boot + 1))
  host_net_up "$i"
  echo "$(date '+%F %T') boot $boot of h$i"
  SYSTEMD_NSPAWN_API_VFS_WRITABLE=network SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 \
  systemd-nspawn --quiet -D "$d/root" -b --register=no --keep-unit \
    --machine="$BED-h$i" --hostname="h$i" \
    --network-namespace-path="/run/netns/$(host_netns "$i")" \
    --capability=CAP_NET_ADMIN \
    --bind-ro="$REPO_DIR:/srv/bedrepo" \
    --bind="$BED_STATE/nfsroots:/srv/bedhosts" \
    --resolv-conf=off --timezone=off --link-journal=no --console=read-only \
    </dev/null >>"$d/console.log" 2>&1 &
  nspawn_pid=$!
  echo "$nspawn_pid" > "$d/nspawn.pid"
  rc=0
  while :; do
    if wait "$nspawn_pid"; then rc=0; else rc=$?; fi
    kill -0 "$nspawn_pid" 2>/dev/null || break
  done
  nspawn_pid=
  rm -f "$d/nspawn.pid"
  host_net_down "$i"
  echo "$(date '+%F %T') h$i stopped (exit $rc)"
  [ "$stop" = 0 ] && [ "$rc" = 133 ] && continue
  break
done
rm -f "$d/runner.pid"
