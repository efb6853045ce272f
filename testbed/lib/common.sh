# Shared settings and helpers for testbed/bed. Sourced, not run.
# Every name the bed makes derives from the bed name, so several beds can live side by side
# and each one can clean up exactly what it made.

BED_CACHE=${GPUCTL_BED_CACHE:-/var/cache/gpuctl-testbed}
BED_STATE_ROOT=/var/lib/gpuctl-testbed
DEBIAN_SUITE=bookworm
# The Debian archive debootstrap fetches from: $GPUCTL_BED_MIRROR, else the first archive of this machine's own
# apt sources that serves $DEBIAN_SUITE (one-line `deb URI SUITE ...` lists and deb822 `.sources` files alike).
apt_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk -v suite="$DEBIAN_SUITE" '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      if ($(i + 1) == suite) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    # deb822: stanzas separated by blank lines; a stanza of Types: deb whose Suites hold the suite
    awk -v suite="$DEBIAN_SUITE" 'BEGIN { RS = ""; FS = "\n" }
      { deb = 0; ok = 0; uri = ""
        for (j = 1; j <= NF; j++) {
          if ($j ~ /^Types:/ && $j ~ /[ \t]deb([ \t]|$)/) deb = 1
          if ($j ~ /^Suites:/) { n = split(substr($j, 8), s, /[ \t]+/); for (k = 1; k <= n; k++) if (s[k] == suite) ok = 1 }
          if ($j ~ /^URIs:/) { split(substr($j, 6), u, /[ \t]+/); uri = (u[1] != "" ? u[1] : u[2]) }
        }
        if (deb && ok && uri != "") { print uri; exit } }' "$f"
  done | head -n 1
}
DEBIAN_MIRROR=${GPUCTL_BED_MIRROR:-$(apt_mirror)}

log()  { printf '%s bed[%s]: %s\n' "$(date +%H:%M:%S)" "${BED:-?}" "$*" >&2; }
die()  { printf 'bed[%s]: error: %s\n' "${BED:-?}" "$*" >&2; exit 1; }
# quiet: run a command, show its output only when it fails.
quiet() {
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf '%s\n' "$out" | tail -n 30 >&2
    die "command failed (exit $rc): $*"
  fi
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "the test bed needs root (network namespaces, mounts, containers); run it as root, e.g. sudo testbed/bed $*"
}

need_tools() {
  local t missing=()
  for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] || die "missing tools: ${missing[*]}; install them with: testbed/bed deps"
}

# bed_init: derive every name of this bed from GPUCTL_BED.
bed_init() {
  BED=${GPUCTL_BED:-bed}
  [[ $BED =~ ^[a-z][a-z0-9]{0,11}$ ]] \
    || die "GPUCTL_BED='$BED' is not a valid bed name: use 1-12 lower-case letters and digits, starting with a letter"
  BED_STATE=$BED_STATE_ROOT/$BED
  BRIDGE=gb-$BED
  # Subnet 10.213.X.0/24: the default bed is X=1; any other name hashes to 2..251,
  # or set GPUCTL_BED_SUBNET=X explicitly when two names collide.
  if [ -n "${GPUCTL_BED_SUBNET:-}" ]; then
    NET_X=$GPUCTL_BED_SUBNET
  elif [ "$BED" = bed ]; then
    NET_X=1
  else
    NET_X=$(( 2 + $(printf '%s' "$BED" | cksum | cut -d' ' -f1) % 250 ))
  fi
  [[ $NET_X =~ ^[0-9]+$ ]] && [ "$NET_X" -ge 1 ] && [ "$NET_X" -le 254 ] \
    || die "GPUCTL_BED_SUBNET='$NET_X' must be a number from 1 to 254"
  NET_PREFIX=10.213.$NET_X
  BRIDGE_ADDR=$NET_PREFIX.1
  SSH_DIR=$BED_STATE/ssh
  CLIENT_KEY=$SSH_DIR/id_ed25519
  KNOWN_HOSTS=$SSH_DIR/known_hosts
  REPO_DIR=$BED_STATE/repo
  LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  TESTBED_DIR=$(dirname "$LIB_DIR")
  REPO_ROOT=$(dirname "$TESTBED_DIR")
}

# Host i (0 = master h0, 1.. = GPU workers).
host_name()  { printf 'h%s' "$1"; }
host_index() { [[ $1 =~ ^h([0-9]+)$ ]] || die "unknown host '$1': hosts are named h0, h1, ..."; printf '%s' "${BASH_REMATCH[1]}"; }
host_addr()  { printf '%s.%s' "$NET_PREFIX" $(( 10 + $1 )); }
host_netns() { printf '%s-h%s' "$BED" "$1"; }
# host-side veth: gv<X>h<i>, short and unique per bed (interface names are at most 15 chars)
host_veth()  { printf 'gv%sh%s' "$NET_X" "$1"; }
host_dir()   { printf '%s/hosts/h%s' "$BED_STATE" "$1"; }

# pid_is_ours PIDFILE WORD: true when the recorded process is alive and its command line contains WORD
# (a recycled PID that now belongs to something else is never treated as ours).
pid_is_ours() {
  local pidfile=$1 word=$2 pid
  [ -s "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$word"
}

# hosts recorded in this bed's state (h0 h1 ...), in order
recorded_hosts() {
  [ -d "$BED_STATE/hosts" ] || return 0
  find "$BED_STATE/hosts" -mindepth 1 -maxdepth 1 -name 'h*' -printf '%f\n' | sort -V
}

# detach CMD...: starts CMD in the background in a session of its own, keeping only fds 0-2 (redirect them at
# the call). A daemon of the bed must not hold on to anything its caller had open: a caller's lock file
# (flock(1) passes its fd on), a pipe a test waits on to reach end of file.
detach() {
  (
    local fd
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [[ $fd =~ ^[0-9]+$ ]] && [ "$fd" -gt 2 ] && eval "exec $fd>&-"
    done 2>/dev/null
    exec setsid "$@"
  ) &
}

hash_text() { sha256sum | cut -c1-16; }
