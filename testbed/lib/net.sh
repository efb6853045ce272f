# The bed's network: one bridge gb-<bed> with 10.213.X.1/24, one network namespace per host
# (<bed>-h<i>, made anew at each boot) joined to the bridge by a veth pair (gv<X>h<i> on the
# bridge, eth0 inside). No default route, no NAT, no forwarding: the hosts reach each other and
# the bridge address (the bed's NTP server), nothing else.

bridge_up() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    # refuse a subnet that some other interface of this machine already uses
    local clash
    clash=$(ip -o -4 addr show | awk -v p="$NET_PREFIX." 'index($4, p) == 1 {print $2}' | head -n1)
    [ -z "$clash" ] || die "subnet $NET_PREFIX.0/24 is already used by interface $clash; pick another with GPUCTL_BED_SUBNET=N (10.213.N.0/24)"
    quiet ip link add "$BRIDGE" type bridge
  fi
  ip -4 addr show dev "$BRIDGE" | grep -q "inet $BRIDGE_ADDR/" || quiet ip addr add "$BRIDGE_ADDR/24" dev "$BRIDGE"
  quiet ip link set "$BRIDGE" up
}

bridge_down() {
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
}

# host_net_up I: a fresh namespace and link for one boot of host I
host_net_up() {
  local i=$1 ns veth
  ns=$(host_netns "$i"); veth=$(host_veth "$i")
  host_net_down "$i"
  quiet ip netns add "$ns"
  # fixed MACs, like a real NIC: a new MAC at each boot would leave the old one in the other
  # hosts' (and this machine's) ARP caches for half a minute
  quiet ip link add "$veth" address "$(printf '02:42:%02x:%02x:00:01' "$NET_X" "$i")" \
    type veth peer name eth0 netns "$ns" address "$(printf '02:42:0a:d5:%02x:%02x' "$NET_X" $((10 + i)))"
  quiet ip link set "$veth" master "$BRIDGE" up
  # a new namespace copies this machine's current net.* settings; a host boots with forwarding off
  ip netns exec "$ns" sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward; echo 0 > /proc/sys/net/ipv6/conf/all/forwarding' 2>/dev/null || true
  quiet ip -n "$ns" link set lo up
  quiet ip -n "$ns" addr add "$(host_addr "$i")/24" dev eth0
  quiet ip -n "$ns" link set eth0 up
}

host_net_down() {
  local i=$1 ns veth
  ns=$(host_netns "$i"); veth=$(host_veth "$i")
  if ip link show "$veth" >/dev/null 2>&1; then ip link del "$veth" 2>/dev/null || true; fi
  if [ -e "/run/netns/$ns" ]; then ip netns del "$ns" 2>/dev/null || true; fi
}
