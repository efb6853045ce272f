# Emulated swap: /run/gpuctl-testbed/swaps, bind-mounted over /proc/swaps, in the kernel's format.
SWAPS=/run/gpuctl-testbed/swaps
SWAPS_HEADER=$'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority'

swaps_init() {
  mkdir -p /run/gpuctl-testbed
  if [ ! -f "$SWAPS" ]; then printf '%s\n' "$SWAPS_HEADER" > "$SWAPS"; fi
  if ! grep -q ' /proc/swaps ' /proc/self/mountinfo; then mount --bind "$SWAPS" /proc/swaps; fi
}

swap_is_active() { awk -v p="$1" 'NR>1 && $1==p {f=1} END {exit !f}' "$SWAPS" 2>/dev/null; }

# swap_on SPEC [PRIO]: exit 0 on success; messages like util-linux swapon
swap_on() {
  local spec=$1 prio=${2:-} dev type size line
  dev=$spec
  case $spec in
    UUID=*|LABEL=*|PARTUUID=*|PARTLABEL=*)
      dev=$(blkid -o device -t "$spec" 2>/dev/null | head -n1) || true
      [ -n "$dev" ] || { echo "swapon: cannot find the device for $spec" >&2; return 4; } ;;
  esac
  [ -e "$dev" ] || { echo "swapon: cannot open $dev: No such file or directory" >&2; return 4; }
  dev=$(readlink -f "$dev")
  if swap_is_active "$dev"; then echo "swapon: $dev: swapon failed: Device or resource busy" >&2; return 4; fi
  if [ -b "$dev" ]; then
    type=partition; size=$(( $(blockdev --getsize64 "$dev") / 1024 ))
  elif [ -f "$dev" ]; then
    type=file; size=$(( $(stat -c %s "$dev") / 1024 ))
    [ "$size" -gt 40 ] || { echo "swapon: $dev: read swap header failed" >&2; return 4; }
    if [ "$(stat -c %a "$dev")" != 600 ]; then
      echo "swapon: $dev: insecure permissions $(stat -c %04a "$dev"), fix with: chmod 0600 $dev" >&2
    fi
  else
    echo "swapon: $dev: swapon failed: Invalid argument" >&2; return 4
  fi
  size=$(( size - 4 ))   # the kernel does not count the header page
  if [ -z "$prio" ]; then
    # like the kernel: automatic priorities are -2, -3, ... in activation order
    prio=$(awk 'NR>1 && $5<0 {n++} END {print -2-n}' "$SWAPS")
  fi
  # the kernel's format (mm/swapfile.c swap_show)
  local pad=$(( ${#dev} < 40 ? 40 - ${#dev} : 1 ))
  local typestr=partition t1=
  [ $type = file ] && typestr=$'file\t'
  [ "$size" -lt 10000000 ] && t1=$'\t'
  line=$(printf '%s%*s%s\t%s\t%s%s\t%s%s' "$dev" "$pad" ' ' "$typestr" "$size" "$t1" 0 $'\t' "$prio")
  printf '%s\n' "$line" >> "$SWAPS"
}

# swap_off PATH
swap_off() {
  local dev=$1 tmp
  case $dev in UUID=*|LABEL=*|PARTUUID=*|PARTLABEL=*) dev=$(blkid -o device -t "$dev" 2>/dev/null | head -n1) || true;; esac
  [ -e "$dev" ] && dev=$(readlink -f "$dev")
  if ! swap_is_active "$dev"; then echo "swapoff: $1: swapoff failed: Invalid argument" >&2; return 4; fi
  tmp=$(mktemp /run/gpuctl-testbed/swaps.XXXXXX)
  awk -v p="$dev" 'NR==1 || $1!=p' "$SWAPS" > "$tmp"
  cat "$tmp" > "$SWAPS"; rm -f "$tmp"
}

# fstab_swaps: SPEC<TAB>OPTIONS of every active swap line in /etc/fstab (any whitespace)
fstab_swaps() {
  [ -r /etc/fstab ] || return 0
  awk '$1 !~ /^#/ && NF >= 3 && $3 == "swap" {print $1 "\t" $4}' /etc/fstab
}

# unit_masked NAME: masked in /etc or /run, as systemctl mask does
unit_masked() {
  local d
  for d in /etc/systemd/system /run/systemd/system; do
    if [ -L "$d/$1" ] && [ "$(readlink "$d/$1")" = /dev/null ]; then return 0; fi
  done
  return 1
}
