# The bed's NTP server: a chronyd on this machine, bound to the bridge address only, serving its
# local clock at stratum 8 and started with -x so it never touches this machine's clock either.
# The hosts' chronyd (also -x, see testbed/image) syncs to it: chronyc tracking/sources show a
# real NTP exchange. PID recorded in $BED_STATE/ntp/server.pid.

ntp_up() {
  local d=$BED_STATE/ntp
  if pid_is_ours "$d/server.pid" "$d/chrony.conf"; then return 0; fi
  need_tools chronyd
  mkdir -p "$d"
  rm -f "$d/chronyd.pid"
  cat > "$d/chrony.conf" <<CONF
# gpuctl test bed '$BED': NTP server for $NET_PREFIX.0/24 (written by testbed/bed)
bindaddress $BRIDGE_ADDR
port 123
allow $NET_PREFIX.0/24
local stratum 8
cmdport 0
bindcmdaddress /
pidfile $d/chronyd.pid
CONF
  detach chronyd -d -x -f "$d/chrony.conf" </dev/null >"$d/chronyd.log" 2>&1
  echo $! > "$d/server.pid"
  # $! is the detaching subshell until it execs chronyd: only a process that is gone has failed,
  # and chronyd has started once it wrote its own pid file (it does so after binding the port).
  local pid=$! n
  for n in $(seq 100); do
    if [ -s "$d/chronyd.pid" ] && pid_is_ours "$d/server.pid" "$d/chrony.conf"; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$d/chronyd.log" >&2
  die "the bed's NTP server (chronyd) did not start within 10 s; log: $d/chronyd.log"
}

ntp_down() {
  local d=$BED_STATE/ntp pid n
  pid_is_ours "$d/server.pid" "$d/chrony.conf" || return 0
  pid=$(cat "$d/server.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for n in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
