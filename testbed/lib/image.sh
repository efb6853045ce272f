# The hosts' root file system: two read-only layers shared by every host of every bed.
#   base-<key>/   debootstrap of Debian 12, keyed by the package list (changing it rebuilds)
#   layer-<key>/  the bed's own changes on top (wrappers, units, apt source), an overlayfs upper
#                 dir built from testbed/image and image.sh; keyed by their content + the base key
# Each host adds its own persistent upper dir (see hosts.sh).

BASE_PACKAGES=systemd,systemd-sysv,dbus,openssh-server,sudo,iproute2,python3,kmod,procps,openssl,iputils-ping

# with_cache_lock CMD...: one builder at a time across beds (they share the cache)
with_cache_lock() {
  mkdir -p "$BED_CACHE"
  (
    flock -w 900 9 || die "waited 15 min for the cache lock $BED_CACHE/.lock (another bed building?)"
    "$@"
  ) 9>"$BED_CACHE/.lock"
}

image_keys() {
  BASE_KEY=$(printf '%s\n' "$DEBIAN_SUITE" minbase "$BASE_PACKAGES" | hash_text)
  BASE_DIR=$BED_CACHE/base-$BASE_KEY
  LAYER_KEY=$( { echo "$BASE_KEY"; cat "$LIB_DIR/image.sh";
                 (cd "$TESTBED_DIR/image" && find . -type f -print0 | sort -z | xargs -0 sha256sum);
                 (cd "$TESTBED_DIR/image" && find . -printf '%p %m\n' | sort); } | hash_text)
  LAYER_DIR=$BED_CACHE/layer-$LAYER_KEY
}

image_ensure() {
  image_keys
  if [ -d "$BASE_DIR" ] && [ -d "$LAYER_DIR" ]; then return 0; fi
  with_cache_lock image_build
}

image_build() {
  if [ ! -d "$BASE_DIR" ]; then
    need_tools debootstrap
    [ -n "$DEBIAN_MIRROR" ] || die "no apt source of this machine serves $DEBIAN_SUITE (/etc/apt/sources.list, sources.list.d); set GPUCTL_BED_MIRROR=URL of a Debian archive"
    local tmp=$BASE_DIR.tmp
    rm -rf "$tmp"
    log "building the base image (debootstrap $DEBIAN_SUITE, once per package list; about 2 min) -> $BASE_DIR"
    if ! debootstrap --variant=minbase --include="$BASE_PACKAGES" "$DEBIAN_SUITE" "$tmp" "$DEBIAN_MIRROR" \
         > "$BED_CACHE/debootstrap.log" 2>&1; then
      tail -n 20 "$BED_CACHE/debootstrap.log" >&2
      die "debootstrap failed (log: $BED_CACHE/debootstrap.log); check that $DEBIAN_MIRROR is reachable"
    fi
    rm -rf "$tmp/var/cache/apt/archives/"*.deb
    mv "$tmp" "$BASE_DIR"
  fi
  if [ ! -d "$LAYER_DIR" ]; then
    log "building the bed layer -> $LAYER_DIR"
    local tmp=$LAYER_DIR.tmp
    if mountpoint -q "$tmp/root" 2>/dev/null; then umount "$tmp/root"; fi
    rm -rf "$tmp"
    mkdir -p "$tmp/upper" "$tmp/work" "$tmp/root"
    mount -t overlay overlay -o "lowerdir=$BASE_DIR,upperdir=$tmp/upper,workdir=$tmp/work" "$tmp/root" \
      || die "cannot mount overlayfs on $tmp/root"
    local rc=0
    ( image_customize "$tmp/root" ) || rc=$?
    umount "$tmp/root"
    [ "$rc" -eq 0 ] || die "customizing the image failed (left in $tmp)"
    mv "$tmp/upper" "$LAYER_DIR"
    rm -rf "$tmp"
  fi
}

# image_customize ROOT: the bed's changes to a stock Debian 12 (each one documented in testbed/README.md)
image_customize() {
  set -euo pipefail
  local r=$1
  # our files: emulation scripts, units, drop-ins, sshd and apt settings
  cp -a "$TESTBED_DIR/image/." "$r/"
  # sshd: host keys are per host (written at host creation), key login only
  rm -f "$r"/etc/ssh/ssh_host_*
  # apt: the bed's local repository is the only source; no lists from the build machine
  rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
  echo 'deb [trusted=yes] file:/srv/bedrepo ./' > "$r/etc/apt/sources.list.d/bedrepo.list"
  rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin
  mkdir -p "$r/var/lib/apt/lists/partial" "$r/srv/bedrepo"
  # sysctl: only net.* is writable in a container; Debian's files that set kernel.*/fs.* are
  # replaced by same-named files in /etc/sysctl.d holding just their net.* lines (if any)
  local f
  for f in "$r"/usr/lib/sysctl.d/*.conf; do
    [ -e "$f" ] || continue
    if grep -Eq '^[[:space:]]*-?(kernel|fs|vm|user|dev|abi|debug)\.' "$f"; then
      { echo "# test bed: masks /usr/lib/sysctl.d/${f##*/} (kernel.*, fs.*, vm.* are read-only in a container)";
        grep -E '^[[:space:]]*-?net\.' "$f" || true; } > "$r/etc/sysctl.d/${f##*/}"
    fi
  done
  # swap and kernel-module emulation: the real binaries are diverted, wrappers take their place
  local p
  for p in /sbin/swapon /sbin/swapoff /sbin/modprobe /sbin/lsmod /bin/lsmod /sbin/rmmod; do
    chroot "$r" dpkg-divert --quiet --local --rename --divert "$p.distrib" --add "$p"
    ln -sfn "/usr/lib/gpuctl-testbed/${p##*/}" "$r$p"
  done
  # NFS emulation (the kernel has neither nfsd nor an NFS client): the diversions are registered
  # before nfs-kernel-server / nfs-common are installed, so dpkg puts their binaries at *.distrib
  for p in /usr/sbin/rpc.nfsd /sbin/mount.nfs; do
    chroot "$r" dpkg-divert --quiet --local --rename --divert "$p.distrib" --add "$p"
    ln -sfn "/usr/lib/gpuctl-testbed/${p##*/}" "$r$p"
  done
  mkdir -p "$r/srv/bedhosts"
  # apt's periodic jobs would race the tests for the dpkg lock
  systemctl --root="$r" --quiet mask apt-daily.timer apt-daily-upgrade.timer
  systemctl --root="$r" --quiet enable gpuctl-testbed-swap.service
  mkdir -p "$r/etc/gpuctl-testbed"
  : > "$r/etc/machine-id"
  printf '# <file system> <mount point> <type> <options> <dump> <pass>\n' > "$r/etc/fstab"
}
