# The hosts' only apt source: a local repository in $BED_STATE/repo, bind-mounted read-only at
# /srv/bedrepo in every host (`deb [trusted=yes] file:/srv/bedrepo ./`). It holds
#  - real Debian packages (REAL_PACKAGES and what they need beyond the base image, computed by
#    apt against the base image's dpkg status), downloaded once with `apt-get download` into
#    $BED_CACHE/debs and kept there;
#  - the emulator packages built by testbed/emulators/build-debs.sh (when that script exists),
#    cached in $BED_CACHE/emu-debs-<hash of testbed/emulators>; their Depends on real packages
#    are added to the download.
# Both halves are indexed once (dpkg-scanpackages is slow) and their Packages files concatenated.
# A read-only bind mount rather than an HTTP server: no extra process to record and kill, nothing
# listening on the bridge, and apt treats file: sources exactly like remote ones.

REAL_PACKAGES="chrony ntpsec ntp nfs-common nfs-kernel-server curl ca-certificates gnupg jq openssl keepalived haproxy"

repo_ensure() {
  emulator_debs_ensure
  local extra closure_list key
  extra=$(emulator_real_depends "$EMU_DIR")
  # GPUCTL_BED_EXTRA_PACKAGES: more real packages for this bed's repository (bench/run adds python3-apt for Ansible)
  closure_list=$(with_cache_lock real_debs_ensure "$REAL_PACKAGES ${GPUCTL_BED_EXTRA_PACKAGES:-} $extra")
  key=$( { cat "$closure_list" "${closure_list%.list}.Packages"; echo "$EMU_DIR"; } | hash_text)
  if [ -f "$REPO_DIR/Packages.gz" ] && [ "$(cat "$REPO_DIR/.key" 2>/dev/null)" = "$key" ]; then return 0; fi
  log "assembling the local apt repository $REPO_DIR"
  mkdir -p "$REPO_DIR"
  find "$REPO_DIR" -maxdepth 1 -name '*.deb' -delete
  local f
  while read -r f; do
    ln -f "$BED_CACHE/debs/$f" "$REPO_DIR/$f" 2>/dev/null || cp "$BED_CACHE/debs/$f" "$REPO_DIR/$f"
  done < "$closure_list"
  { cat "${closure_list%.list}.Packages"
    if [ -n "$EMU_DIR" ]; then
      for f in "$EMU_DIR"/*.deb; do ln -f "$f" "$REPO_DIR/" 2>/dev/null || cp "$f" "$REPO_DIR/"; done
      cat "$EMU_DIR/Packages"
    fi; } > "$REPO_DIR/Packages.new"
  gzip -9c "$REPO_DIR/Packages.new" > "$REPO_DIR/Packages.gz.new"
  mv "$REPO_DIR/Packages.new" "$REPO_DIR/Packages"
  mv "$REPO_DIR/Packages.gz.new" "$REPO_DIR/Packages.gz"
  chmod -R a+rX "$REPO_DIR"
  echo "$key" > "$REPO_DIR/.key"
}

# scan_packages DIR: the Packages index of the .debs in DIR (paths ./NAME.deb)
scan_packages() {
  ( cd "$1" && dpkg-scanpackages --multiversion . /dev/null 2>/dev/null )
}

# emulator_debs_ensure: sets EMU_DIR to the cached build of testbed/emulators (built when its
# content changed; shared by all beds), or to '' when there are no emulators.
emulator_debs_ensure() {
  local script=$TESTBED_DIR/emulators/build-debs.sh key
  EMU_DIR=
  if [ "${GPUCTL_BED_NO_EMULATORS:-}" = 1 ] || [ ! -f "$script" ]; then return 0; fi
  key=$(cd "$TESTBED_DIR/emulators" && find . -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | hash_text)
  EMU_DIR=$BED_CACHE/emu-debs-$key
  [ -f "$EMU_DIR/Packages" ] || with_cache_lock emulator_debs_build "$script"
}

emulator_debs_build() {
  [ -f "$EMU_DIR/Packages" ] && return 0
  log "building the emulator packages (testbed/emulators/build-debs.sh)"
  local tmp=$EMU_DIR.tmp log=$BED_CACHE/build-debs.log
  rm -rf "$tmp"; mkdir -p "$tmp"
  if ! bash "$1" "$tmp" > "$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "testbed/emulators/build-debs.sh failed (log: $log); fix it, or set GPUCTL_BED_NO_EMULATORS=1 to bring the bed up without emulator packages"
  fi
  compgen -G "$tmp/*.deb" >/dev/null || die "testbed/emulators/build-debs.sh built no .deb in $tmp (log: $log)"
  scan_packages "$tmp" > "$tmp/Packages" || die "dpkg-scanpackages failed on $tmp"
  rm -rf "$EMU_DIR"; mv "$tmp" "$EMU_DIR"
  # keep the five newest emulator builds
  ls -1dt "$BED_CACHE"/emu-debs-* 2>/dev/null | grep -v '\.tmp$' | tail -n +6 | xargs -r rm -rf
}

# emulator_real_depends DIR: real Debian packages the emulator .debs depend on (read from the
# index of DIR: every Depends/Pre-Depends name that no emulator package is or provides)
emulator_real_depends() {
  local dir=$1
  [ -n "$dir" ] && [ -f "$dir/Packages" ] || return 0
  awk -F': ' '
    $1 == "Package" || $1 == "Provides" { n = split($2, a, ","); for (i = 1; i <= n; i++) { sub(/^ */, "", a[i]); sub(/[ (].*/, "", a[i]); own[a[i]] = 1 } }
    $1 == "Depends" || $1 == "Pre-Depends" { n = split($2, a, ","); for (i = 1; i <= n; i++) { x = a[i]; sub(/\|.*/, "", x); sub(/^ */, "", x); sub(/[ (:].*/, "", x); if (x != "") dep[x] = 1 } }
    END { for (d in dep) if (!(d in own)) printf "%s ", d }' "$dir/Packages"
}

# real_debs_ensure "PKGS": prints the path of a list of .deb file names (in $BED_CACHE/debs) that
# make PKGS installable on the base image; downloads what is missing. Runs under the cache lock.
real_debs_ensure() {
  local pkgs list key p
  pkgs=$(printf '%s\n' $1 | sort -u | tr '\n' ' ')
  key=$(printf '%s\n' "$BASE_KEY" "$pkgs" | hash_text)
  list=$BED_CACHE/debs/closure-$key.list
  mkdir -p "$BED_CACHE/debs"
  if [ -f "$list" ]; then
    local missing=0
    while read -r p; do [ -f "$BED_CACHE/debs/$p" ] || missing=1; done < "$list"
    if [ $missing = 0 ] && [ -f "${list%.list}.Packages" ]; then echo "$list"; return 0; fi
  fi
  log "computing and downloading the real packages for the local repository: $pkgs"
  local status=$BASE_DIR/var/lib/dpkg/status uris=$BED_CACHE/debs/uris-$key.txt
  [ -f "$status" ] || die "base image dpkg status $status is missing; run: testbed/bed down && testbed/bed up"
  : > "$uris"
  # an empty archive dir: apt leaves out of --print-uris what it finds already downloaded there
  local arch=$BED_CACHE/debs/.archives; rm -rf "$arch"; mkdir -p "$arch/partial"
  # one package at a time: some of them conflict with each other (chrony vs ntpsec)
  for p in $pkgs; do
    if ! apt-get -qq -o Dir::State::status="$status" -o Debug::NoLocking=1 -o Dir::Cache::archives="$arch" \
         -o APT::Get::AllowUnauthenticated=false install --print-uris -y "$p" >> "$uris" 2>"$BED_CACHE/debs/apt-$p.err"; then
      cat "$BED_CACHE/debs/apt-$p.err" >&2
      die "apt cannot resolve '$p' against the base image; run 'apt-get update' on this machine (testbed/bed deps) and retry"
    fi
  done
  rm -rf "$arch"
  local files
  files=$(grep -o "^'[^']*' [^ ]*" "$uris" | awk '{print $2}' | sort -u)
  # file names are NAME_VERSION_ARCH.deb with the epoch's ':' written as %3a
  local want=()
  for p in $files; do
    [ -f "$BED_CACHE/debs/$p" ] && continue
    local n=${p%%_*} rest=${p#*_}
    local v=${rest%_*}; v=${v//%3a/:}
    local a=${rest##*_}; a=${a%.deb}
    want+=("$n:$a=$v")
  done
  if [ ${#want[@]} -gt 0 ]; then
    local dl=$BED_CACHE/debs/.download
    rm -rf "$dl"; mkdir -p "$dl"; chown _apt "$dl" 2>/dev/null || true
    ( cd "$dl" && apt-get -qq download "${want[@]}" ) > "$BED_CACHE/debs/download.log" 2>&1 \
      || { tail -n 20 "$BED_CACHE/debs/download.log" >&2; die "apt-get download failed (log: $BED_CACHE/debs/download.log)"; }
    mv "$dl"/*.deb "$BED_CACHE/debs/"
    rm -rf "$dl"
  fi
  for p in $files; do [ -f "$BED_CACHE/debs/$p" ] || die "apt-get download did not produce $p"; done
  local scan=$BED_CACHE/debs/.scan
  rm -rf "$scan"; mkdir -p "$scan"
  for p in $files; do ln -f "$BED_CACHE/debs/$p" "$scan/$p"; done
  scan_packages "$scan" > "${list%.list}.Packages" || die "dpkg-scanpackages failed on $scan"
  rm -rf "$scan"
  printf '%s\n' $files > "$list"
  echo "$list"
}
