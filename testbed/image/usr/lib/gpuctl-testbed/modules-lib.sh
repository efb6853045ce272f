# Emulated kernel modules: the "loaded" set lives in /run/gpuctl-testbed/modules (one per line,
# gone at the next boot); what can be loaded is listed in modules.available.d/*.list.
MODULES=/run/gpuctl-testbed/modules

mod_norm() { printf '%s' "${1//-/_}"; }

# mod_deps NAME: prints the module's dependencies; fails when the module is unknown
mod_deps() {
  local f
  for f in /usr/lib/gpuctl-testbed/modules.available.d/*.list /etc/gpuctl-testbed/modules.available.d/*.list; do
    [ -r "$f" ] || continue
    awk -v m="$1" '$1 !~ /^#/ && $1 == m {found=1; for (i = 2; i <= NF; i++) print $i} END {exit !found}' "$f" && return 0
  done
  return 1
}

mod_loaded() { [ -f "$MODULES" ] && grep -qx "$1" "$MODULES"; }

# mod_load NAME: loads its dependencies first, like modprobe
mod_load() {
  local m d
  m=$(mod_norm "$1")
  mod_loaded "$m" && return 0
  local deps
  deps=$(mod_deps "$m") || return 1
  for d in $deps; do mod_load "$d" || return 1; done
  mkdir -p /run/gpuctl-testbed
  echo "$m" >> "$MODULES"
}

mod_unload() {
  local m tmp
  m=$(mod_norm "$1")
  mod_loaded "$m" || return 1
  tmp=$(mktemp /run/gpuctl-testbed/modules.XXXXXX)
  grep -vx "$m" "$MODULES" > "$tmp" || true
  cat "$tmp" > "$MODULES"; rm -f "$tmp"
}
