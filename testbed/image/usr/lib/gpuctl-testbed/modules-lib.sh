# Emulated kernel modules: the "loaded" set lives in /run/gpuctl-testbed/modules (one per line,
# gone at the next boot); what can be loaded is listed in modules.available.d/*.list. A module may
# have a hook, modules.hooks.d/NAME (from an emulator package): run with "load" after it is loaded and
# with "unload" before it is unloaded; a hook that fails refuses the unload ("in use"), as the kernel
# refuses to remove a module whose use count is not zero.
MODULES=/run/gpuctl-testbed/modules
HOOKS=/usr/lib/gpuctl-testbed/modules.hooks.d
MOD_USERS=""

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
  if [ -x "$HOOKS/$m" ]; then "$HOOKS/$m" load || true; fi
}

# mod_users NAME: the loaded modules that depend on NAME (its "Used by" column)
mod_users() {
  local u out=""
  [ -f "$MODULES" ] || return 0
  while read -r u; do
    [ -n "$u" ] && [ "$u" != "$1" ] || continue
    if mod_deps "$u" 2>/dev/null | grep -qx "$1"; then out="$out${out:+,}$u"; fi
  done < "$MODULES"
  printf '%s' "$out"
}

# mod_unload NAME: 1 when not loaded; 2 when in use (MOD_USERS: the modules using it, empty when a process
# holds it: the hook refused)
mod_unload() {
  local m tmp
  m=$(mod_norm "$1")
  mod_loaded "$m" || return 1
  MOD_USERS=$(mod_users "$m")
  [ -z "$MOD_USERS" ] || return 2
  if [ -x "$HOOKS/$m" ] && ! "$HOOKS/$m" unload; then return 2; fi
  tmp=$(mktemp /run/gpuctl-testbed/modules.XXXXXX)
  grep -vx "$m" "$MODULES" > "$tmp" || true
  cat "$tmp" > "$MODULES"; rm -f "$tmp"
}
