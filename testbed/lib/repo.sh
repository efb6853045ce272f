# The hosts' only apt source: a local repository in $BED_STATE/repo, bind-mounted read-only at
# /srv/bedrepo in every host (`deb [trusted=yes] file:/srv/bedrepo ./`). It holds
#  - real Debian packages (REAL_PACKAGES and what they need beyond the base image, computed by
#    apt against the base image's dpkg status), downloaded once with `apt-get download` into
#    $BED_CACHE/debs and kept there;
#  - the emulator packages built by testbed/emulators/build-debs.sh (when that script exists);
#    their Depends on real packages are added to the download.
# A read-only bind mount rather than an HTTP server: no extra process to record and kill, nothing
# listening on the bridge, and apt treats file: sources exactly like remote ones.

REAL_PACKAGES="chrony ntpsec ntp nfs-common nfs-kernel-server curl ca-certificates gnupg jq openssl"

repo_ensure() {
  local emu_dir=$BED_STATE/emu-debs
  emulator_debs_ensure "$emu_dir"
  local extra
  extra=$(emulator_real_depends "$emu_dir")
  local closure_list
  closure_list=$(with_cache_lock real_debs_ensure "$REAL_PACKAGES $extra")
  local key
  key=$( { cat "$closure_list"; cat "$emu_dir/.key" 2>/dev/null || true; } | hash_text)
  if [ -f "$REPO_DIR/Packages.gz" ] && [ "$(cat "$REPO_DIR/.key" 2>/dev/null)" = "$key" ]; then return 0; fi
  log "indexing the local apt repository $REPO_DIR"
  mkdir -p "$REPO_DIR"
  find "$REPO_DIR" -maxdepth 1 -name '*.deb' -delete
  local f
  while read -r f; do
    ln -f "$BED_CACHE/debs/$f" "$REPO_DIR/$f" 2>/dev/null || cp "$BED_CACHE/debs/$f" "$REPO_DIR/$f"
  done < "$closure_list"
  if compgen -G "$emu_dir/*.deb" >/dev/null; then cp -f "$emu_dir"/*.deb "$REPO_DIR/"; fi
  ( cd "$REPO_DIR" && dpkg-scanpackages --multiversion . /dev/null 2>"$BED_STATE/scanpackages.log" > Packages.new ) \
    || die "dpkg-scanpackages failed in $REPO_DIR (log: $BED_STATE/scanpackages.log)"
  gzip -9c "$REPO_DIR/Packages.new" > "$REPO_DIR/Packages.gz.new"
  mv "$REPO_DIR/Packages.new" "$REPO_DIR/Packages"
  mv "$REPO_DIR/Packages.gz.new" "$REPO_DIR/Packages.gz"
  chmod -R a+rX "$REPO_DIR"
  echo "$key" > "$REPO_DIR/.key"
}

# emulator_debs_ensure DIR: (re)build the emulator .debs when testbed/emulators changed
emulator_debs_ensure() {
  local dir=$1 script=$TESTBED_DIR/emulators/build-debs.sh key
  if [ "${GPUCTL_BED_NO_EMULATORS:-}" = 1 ] || [ ! -f "$script" ]; then
    [ -f "$script" ] || [ ! -d "$dir" ] || rm -rf "$dir"
    return 0
  fi
  key=$(cd "$TESTBED_DIR/emulators" && find . -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | hash_text)
  if [ -f "$dir/.key" ] && [ "$(cat "$dir/.key")" = "$key" ]; then return 0; fi
  log "building the emulator packages (testbed/emulators/build-debs.sh)"
  rm -rf "$dir"; mkdir -p "$dir"
  if ! bash "$script" "$dir" > "$BED_STATE/build-debs.log" 2>&1; then
    tail -n 20 "$BED_STATE/build-debs.log" >&2
    die "testbed/emulators/build-debs.sh failed (log: $BED_STATE/build-debs.log); fix it, or set GPUCTL_BED_NO_EMULATORS=1 to bring the bed up without emulator packages"
  fi
  echo "$key" > "$dir/.key"
}

# emulator_real_depends DIR: real Debian packages the emulator .debs depend on
emulator_real_depends() {
  local dir=$1 f own deps
  compgen -G "$dir/*.deb" >/dev/null || return 0
  own=$(for f in "$dir"/*.deb; do dpkg-deb -f "$f" Package; dpkg-deb -f "$f" Provides | tr ',' '\n'; done | sed 's/[ (].*//; s/^ *//' | sort -u)
  deps=$(for f in "$dir"/*.deb; do dpkg-deb -f "$f" Depends Pre-Depends; done \
           | sed 's/^[A-Za-z-]*: *//' | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/:any//; s/^ *//; s/ *$//' | grep -v '^$' | sort -u)
  comm -23 <(printf '%s\n' $deps) <(printf '%s\n' $own) | tr '\n' ' '
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
    if [ $missing = 0 ]; then echo "$list"; return 0; fi
  fi
  log "computing and downloading the real packages for the local repository: $pkgs"
  local status=$BASE_DIR/var/lib/dpkg/status uris=$BED_CACHE/debs/uris-$key.txt
  [ -f "$status" ] || die "base image dpkg status $status is missing; run: testbed/bed down && testbed/bed up"
  : > "$uris"
  # one package at a time: some of them conflict with each other (chrony vs ntpsec)
  for p in $pkgs; do
    if ! apt-get -qq -o Dir::State::status="$status" -o Debug::NoLocking=1 \
         -o APT::Get::AllowUnauthenticated=false install --print-uris -y "$p" >> "$uris" 2>"$BED_CACHE/debs/apt-$p.err"; then
      cat "$BED_CACHE/debs/apt-$p.err" >&2
      die "apt cannot resolve '$p' against the base image; run 'apt-get update' on this machine (testbed/bed deps) and retry"
    fi
  done
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
  printf '%s\n' $files > "$list"
  echo "$list"
}
