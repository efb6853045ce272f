# Hosts: h0 is the master (no GPU), h1..hN are GPU workers. Each host's state lives in
# $BED_STATE/hosts/h<i>/:
#   upper/ work/   its persistent overlay layer (its "disk"); root/ the mounted root file system
#   lower          the read-only layers it was created on (kept for its lifetime)
#   hostkeys/      its sshd host key;  runner.pid nspawn.pid  recorded processes
#   console.log    the container console (boot messages);  runner.log  boots, reboots, stops

SSH_OPTS=()
ssh_opts_init() {
  SSH_OPTS=(-F /dev/null -i "$CLIENT_KEY" -o IdentitiesOnly=yes -o UserKnownHostsFile="$KNOWN_HOSTS"
            -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=3 -o LogLevel=ERROR
            -o ServerAliveInterval=5 -o ServerAliveCountMax=3)
}

client_key_ensure() {
  mkdir -p "$SSH_DIR"; chmod 700 "$SSH_DIR"
  [ -f "$CLIENT_KEY" ] || quiet ssh-keygen -q -t ed25519 -N '' -C "gpuctl-testbed-$BED" -f "$CLIENT_KEY"
}

# host_role I
host_role() { [ "$1" -eq 0 ] && echo master || echo worker; }

host_mount() {
  local i=$1 d lower
  d=$(host_dir "$i")
  mkdir -p "$d/upper" "$d/work" "$d/root"
  [ -f "$d/lower" ] || echo "$LAYER_DIR:$BASE_DIR" > "$d/lower"
  lower=$(cat "$d/lower")
  local l; IFS=: read -ra l <<< "$lower"
  for l in "${l[@]}"; do
    [ -d "$l" ] || die "h$i was created on the image layer $l, which is gone from the cache; run: testbed/bed down && testbed/bed up"
  done
  if ! mountpoint -q "$d/root"; then
    mount -t overlay "overlay-$BED-h$i" -o "lowerdir=$lower,upperdir=$d/upper,workdir=$d/work" "$d/root" \
      || die "cannot mount the overlay root of h$i on $d/root"
  fi
  # the emulated NFS (see testbed/README.md) reads a server's files through $BED_STATE/nfsroots,
  # bind-mounted into every host at /srv/bedhosts: a second, private mount of each root, so that
  # the mounts a container makes under its own root (/proc, /run, ...) never show up there
  local v=$BED_STATE/nfsroots/h$i
  mkdir -p "$v"
  if ! mountpoint -q "$v"; then
    mount --bind "$d/root" "$v" && mount --make-private "$v" || die "cannot bind-mount the root of h$i on $v"
  fi
}

# host_create I GPUS: first-time files of a new host, written into its own upper layer
host_create() {
  local i=$1 gpus=$2 d r name role
  d=$(host_dir "$i"); r=$d/root; name=$(host_name "$i"); role=$(host_role "$i")
  [ -f "$d/created" ] && return 0
  echo "$name" > "$r/etc/hostname"
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$r/etc/machine-id"; echo >> "$r/etc/machine-id"
  { printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n'
    printf '# test bed %s\n' "$BED"
    local j; for j in $(seq 0 "$BED_MAX_HOSTS"); do printf '%s\th%s\n' "$(host_addr "$j")" "$j"; done; } > "$r/etc/hosts"
  # sshd host key of this host, kept outside the host too (known_hosts is built from it)
  mkdir -p "$d/hostkeys"
  [ -f "$d/hostkeys/ssh_host_ed25519_key" ] \
    || quiet ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$d/hostkeys/ssh_host_ed25519_key"
  install -m 600 "$d/hostkeys/ssh_host_ed25519_key" "$r/etc/ssh/ssh_host_ed25519_key"
  install -m 644 "$d/hostkeys/ssh_host_ed25519_key.pub" "$r/etc/ssh/ssh_host_ed25519_key.pub"
  install -d -m 700 "$r/root/.ssh"
  install -m 600 "$CLIENT_KEY.pub" "$r/root/.ssh/authorized_keys"
  echo "$role" > "$r/etc/gpuctl-testbed/role"
  # swap: on workers a tab-separated fstab line (as Ubuntu's installer writes it), on the master
  # a space-separated one; both active at boot (see gpuctl-testbed-swap.service)
  if [ "$role" = worker ]; then
    truncate -s 1G "$r/swap.img"; chmod 600 "$r/swap.img"
    printf '/swap.img\tnone\tswap\tsw\t0\t0\n' >> "$r/etc/fstab"
  else
    truncate -s 512M "$r/swapfile"; chmod 600 "$r/swapfile"
    printf '/swapfile none swap sw 0 0\n' >> "$r/etc/fstab"
  fi
  touch "$d/created"
}

# host_configure I GPUS: settings that follow the bed's options on every `up`
host_configure() {
  local i=$1 gpus=$2 r
  r=$(host_dir "$i")/root
  if [ "$(host_role "$i")" = worker ]; then
    [ "$(cat "$r/etc/gpuctl-testbed/gpus" 2>/dev/null)" = "$gpus" ] || echo "$gpus" > "$r/etc/gpuctl-testbed/gpus"
  fi
}

host_running() { pid_is_ours "$(host_dir "$1")/runner.pid" host-runner.sh; }

host_start() {
  local i=$1 d n
  d=$(host_dir "$i")
  rm -f "$d/runner.pid"
  detach bash "$LIB_DIR/host-runner.sh" "$BED" "$i" </dev/null >>"$d/runner.log" 2>&1
  # the runner records its own PID; on a loaded machine that can take a while, so only a runner
  # that is gone (or 30 s without the record) is a failed start
  local pid=$!
  for n in $(seq 600); do
    [ -s "$d/runner.pid" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -s "$d/runner.pid" ] && return 0
  die "the runner of h$i did not start; see $d/runner.log"
}

# host_stop I [fast]: orderly shutdown (the container's systemd halts), then the leftovers;
# with "fast" (bed down: the disk is thrown away) nspawn is told at once to terminate the container
host_stop() {
  local i=$1 fast=${2:-} d pid n
  d=$(host_dir "$i")
  if pid_is_ours "$d/runner.pid" host-runner.sh; then
    pid=$(cat "$d/runner.pid")
    kill -TERM "$pid" 2>/dev/null || true
    if [ "$fast" = fast ] && pid_is_ours "$d/nspawn.pid" systemd-nspawn; then
      # nspawn: a second SIGTERM terminates the container immediately
      sleep 0.2; kill -TERM "$(cat "$d/nspawn.pid" 2>/dev/null)" 2>/dev/null || true
    fi
    for n in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "h$i did not shut down in 30 s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # an nspawn left behind by a killed runner
  if pid_is_ours "$d/nspawn.pid" systemd-nspawn; then
    pid=$(cat "$d/nspawn.pid")
    kill -TERM "$pid" 2>/dev/null || true
    for n in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$d/runner.pid" "$d/nspawn.pid"
  host_net_down "$i"
}

host_umount() {
  local d v; d=$(host_dir "$1"); v=$BED_STATE/nfsroots/h$1
  if mountpoint -q "$v" 2>/dev/null; then umount "$v" 2>/dev/null || umount -l "$v"; fi
  if mountpoint -q "$d/root" 2>/dev/null; then
    umount "$d/root" 2>/dev/null || umount -l "$d/root"
  fi
}

# host_wait I DEADLINE: until sshd answers with our key and systemd has finished booting
host_wait() {
  local i=$1 deadline=$2 addr state
  addr=$(host_addr "$i")
  while :; do
    if ! host_running "$i"; then
      tail -n 20 "$(host_dir "$i")/console.log" >&2
      echo "h$i: its container exited during boot; console log: $(host_dir "$i")/console.log" >&2
      return 1
    fi
    if timeout 1 bash -c "exec 3<>/dev/tcp/$addr/22" 2>/dev/null; then
      state=$(timeout 60 ssh "${SSH_OPTS[@]}" "root@$addr" 'systemctl is-system-running --wait' 2>/dev/null) || true
      case $state in running|degraded) return 0 ;; esac
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "h$i ($addr) did not finish booting in time (state: '${state:-no ssh}'); console log: $(host_dir "$i")/console.log" >&2
      return 1
    fi
    sleep 0.2
  done
}

# host_after_boot I: GPU workers get the emulated NVIDIA driver (when the repository has it),
# installed from the local repository as an admin would
host_after_boot() {
  local i=$1
  [ "$(host_role "$i")" = worker ] || return 0
  grep -q '^Package: nvidia-driver-emu$' "$REPO_DIR/Packages" 2>/dev/null || return 0
  ssh "${SSH_OPTS[@]}" "root@$(host_addr "$i")" \
    "dpkg-query -W -f='\${Status}' nvidia-driver-emu 2>/dev/null | grep -q 'ok installed' && exit 0
     export DEBIAN_FRONTEND=noninteractive
     apt-get -qq update && apt-get -qq install -y nvidia-driver-emu >/tmp/gpuctl-testbed-driver.log 2>&1 \
       || { tail -n 20 /tmp/gpuctl-testbed-driver.log; exit 1; }" \
    || { echo "h$i: installing nvidia-driver-emu from the local repository failed (see above)" >&2; return 1; }
}

known_hosts_write() {
  local i tmp=$KNOWN_HOSTS.tmp
  : > "$tmp"
  for i in $(recorded_hosts); do
    i=${i#h}
    printf '%s,h%s %s\n' "$(host_addr "$i")" "$i" "$(cut -d' ' -f1-2 "$(host_dir "$i")/hostkeys/ssh_host_ed25519_key.pub")" >> "$tmp"
  done
  mv "$tmp" "$KNOWN_HOSTS"
}
