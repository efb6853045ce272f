#!/bin/bash
# Builds the test bed's emulator packages under their real names: build-debs.sh OUTDIR
# K8S_VERSIONS (default "1.34.2 1.35.0 1.35.1": two minors, so that upgrades have somewhere to go) picks the kubeadm/kubelet/kubectl patch versions built.
set -euo pipefail
OUT=${1:?usage: build-debs.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
K8S_VERSIONS=${K8S_VERSIONS:-"1.34.2 1.35.0 1.35.1"}
DOCKER_VERSION=28.5.1
CONTAINERD_VERSION=1.7.28
CTK_VERSION=1.18.0
CRID_VERSION=0.3.20
DRIVER_VERSION=$(awk '{for(i=1;i<=NF;i++) if ($i ~ /^[0-9]+\.[0-9]+\.[0-9]+$/) {print $i; exit}}' "$HERE/lib/proc-driver-nvidia-version")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# pkg NAME VERSION ARCH "DEPENDS" "DESCRIPTION" [EXTRA control lines]
pkg() {
  P="$WORK/$1_$2"; PNAME=$1; PVER=$2; PARCH=$3
  mkdir -p "$P/DEBIAN"
  {
    echo "Package: $1"; echo "Version: $2"; echo "Architecture: $3"
    echo "Maintainer: gpuctl test bed <testbed@gpuctl.invalid>"
    [ -n "$4" ] && echo "Depends: $4"
    [ -n "${6:-}" ] && printf '%s\n' "$6"
    echo "Section: admin"; echo "Priority: optional"
    echo "Description: $5"
    echo " Test-bed emulator: accepts the real command line, writes the real files and"
    echo " fails the way the real tool fails, without running containers or GPUs."
  } > "$P/DEBIAN/control"
}
# inst SRC DEST MODE : copy with placeholders substituted
inst() {
  mkdir -p "$P/$(dirname "$2")"
  sed -e "s/@K8S_VERSION@/${K8S_VERSION:-}/g; s/@DOCKER_VERSION@/$DOCKER_VERSION/g; s/@CONTAINERD_VERSION@/${CTD_VER:-$CONTAINERD_VERSION}/g" \
      -e "s/@CONTAINERD_FLAVOUR@/${CTD_FLAVOUR:-containerd.io}/g; s/@CTK_VERSION@/$CTK_VERSION/g; s/@CRID_VERSION@/$CRID_VERSION/g" \
      -e "s/@CRICTL_VERSION@/${CRICTL_VERSION:-1.35.0}/g; s/@DRIVER_VERSION@/$DRIVER_VERSION/g" "$1" > "$P/$2"
  chmod "${3:-0755}" "$P/$2"
}
# script NAME BODY : maintainer script
script() { printf '#!/bin/sh\nset -e\n%s\n' "$2" > "$P/DEBIAN/$1"; chmod 0755 "$P/DEBIAN/$1"; }
# service units: enable always, (re)start only when systemd runs
svc_postinst() {
  script postinst "if [ \"\$1\" = configure ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
  for u in $1; do systemctl enable \"\$u\" >/dev/null 2>&1 || true; done
  if [ -d /run/systemd/system ]; then for u in $1; do systemctl ${2:-restart} \"\$u\" || true; done; fi
fi"
  script prerm "if [ -d /run/systemd/system ] && [ \"\$1\" = remove ]; then for u in $1; do systemctl stop \"\$u\" || true; done; fi"
  script postrm "if [ \"\$1\" = purge ]; then for u in $1; do systemctl disable \"\$u\" >/dev/null 2>&1 || true; done; fi
systemctl daemon-reload >/dev/null 2>&1 || true"
}
build() {
  find "$P" -path "$P/DEBIAN" -prune -o -type f -print | sed "s#^$P/##" | grep '^etc/' | sed 's#^#/#' > "$P/DEBIAN/conffiles" || true
  [ -s "$P/DEBIAN/conffiles" ] || rm -f "$P/DEBIAN/conffiles"
  echo "Installed-Size: $(du -sk --exclude=DEBIAN "$P" | cut -f1)" >> "$P/DEBIAN/control"
  dpkg-deb --root-owner-group -Zxz --build "$P" "$OUT/${PNAME}_${PVER#*:}_${PARCH}.deb" >/dev/null
  echo "built ${PNAME}_${PVER}_${PARCH}.deb"
}
B=$HERE/bin U=$HERE/units

pkg gpuctl-emu-common 1.0.0 all "python3 (>= 3.11), python3-yaml, openssl, iproute2" "shared code of the gpuctl test bed emulators"
inst "$HERE/lib/emu.py" /usr/lib/gpuctl-emu/emu.py 0644
inst "$HERE/lib/etcdsnap.py" /usr/lib/gpuctl-emu/etcdsnap.py 0644
inst "$HERE/lib/nodedrain.py" /usr/lib/gpuctl-emu/nodedrain.py 0644
inst "$HERE/lib/kubeadm_certs.py" /usr/lib/gpuctl-emu/kubeadm_certs.py 0644
inst "$HERE/lib/kubeadm_uploadcerts.py" /usr/lib/gpuctl-emu/kubeadm_uploadcerts.py 0644
inst "$HERE/lib/etcd_member.py" /usr/lib/gpuctl-emu/etcd_member.py 0644
inst "$HERE/lib/static_pods.py" /usr/lib/gpuctl-emu/static_pods.py 0644
inst "$HERE/lib/kubeupgrade.py" /usr/lib/gpuctl-emu/kubeupgrade.py 0644
inst "$HERE/lib/mig.py" /usr/lib/gpuctl-emu/mig.py 0644
inst "$HERE/lib/gpuuse.py" /usr/lib/gpuctl-emu/gpuuse.py 0644
inst "$HERE/lib/kueue.py" /usr/lib/gpuctl-emu/kueue.py 0644
build

for K8S_VERSION in $K8S_VERSIONS; do
  V="$K8S_VERSION-1.1"
  pkg kubectl "$V" amd64 "gpuctl-emu-common" "Command-line utility for interacting with a Kubernetes cluster"
  inst "$B/kubectl" /usr/bin/kubectl; build

  pkg kubelet "$V" amd64 "iproute2, mount, kubernetes-cni (>= 1.2.0), gpuctl-emu-common" "Node agent for Kubernetes clusters"
  inst "$B/kubelet" /usr/bin/kubelet
  inst "$B/kube-apiserver" /usr/lib/gpuctl-emu/kube-apiserver
  inst "$HERE/lib/cnilinks.py" /usr/lib/gpuctl-emu/cnilinks.py 0644
  # the emulated API server's modules ship with it (apiserver_store.py carries @K8S_VERSION@)
  for m in apiserver_store apiserver_pods apiserver_controllers apiserver_http; do
    inst "$HERE/lib/$m.py" /usr/lib/gpuctl-emu/$m.py 0644
  done
  inst "$U/kubelet.service" /usr/lib/systemd/system/kubelet.service 0644
  inst "$U/gpuctl-emu-apiserver.service" /usr/lib/systemd/system/gpuctl-emu-apiserver.service 0644
  mkdir -p "$P/etc/kubernetes/manifests" "$P/var/lib/kubelet"
  svc_postinst kubelet.service restart
  build

  pkg kubeadm "$V" amd64 "cri-tools (>= 1.30.0), gpuctl-emu-common, python3-cryptography" "Command-line utility for administering a Kubernetes cluster"
  inst "$B/kubeadm" /usr/bin/kubeadm
  inst "$U/10-kubeadm.conf" /usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf 0644
  script postinst 'systemctl daemon-reload >/dev/null 2>&1 || true'
  build
done

K8S_VERSION=1.35.0
pkg cri-tools 1.35.0-1.1 amd64 "gpuctl-emu-common" "Command-line utility for interacting with a container runtime"
inst "$B/crictl" /usr/bin/crictl; build

pkg etcd-client 3.6.6-1 amd64 "gpuctl-emu-common" "etcd client (etcdctl) and offline utility (etcdutl)"
inst "$HERE/lib/etcdsnap.py" /usr/bin/etcdctl; inst "$HERE/lib/etcdsnap.py" /usr/bin/etcdutl; build

pkg kubernetes-cni 1.7.1-1.1 amd64 "" "Binaries required to provision kubernetes container networking"
for p in bandwidth bridge dhcp dummy firewall host-device host-local ipvlan loopback macvlan portmap ptp sbr static tap tuning vlan vrf; do
  mkdir -p "$P/opt/cni/bin"
  printf '#!/bin/sh\n# CNI plugin stand-in (%s v1.7.1)\necho '"'"'{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}'"'"'\n' "$p" > "$P/opt/cni/bin/$p"
  chmod 0755 "$P/opt/cni/bin/$p"
done
mkdir -p "$P/etc/cni/net.d"
build

pkg containerd.io "$CONTAINERD_VERSION-1~debian.12~bookworm" amd64 "gpuctl-emu-common" "An open and reliable container runtime" \
"Provides: containerd, runc
Conflicts: containerd, runc
Replaces: containerd, runc"
CTD_FLAVOUR=containerd.io CTD_VER=$CONTAINERD_VERSION
inst "$B/containerd" /usr/bin/containerd
inst "$B/runc" /usr/bin/runc
inst "$U/containerd.service" /usr/lib/systemd/system/containerd.service 0644
mkdir -p "$P/etc/containerd"
cat > "$P/etc/containerd/config.toml" <<'TOML'
#   Copyright 2018-2022 Docker Inc.

#   Licensed under the Apache License, Version 2.0 (the "License");
#   you may not use this file except in compliance with the License.
#   You may obtain a copy of the License at

#       http://www.apache.org/licenses/LICENSE-2.0

#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS,
#   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#   See the License for the specific language governing permissions and
#   limitations under the License.

disabled_plugins = ["cri"]

#root = "/var/lib/containerd"
#state = "/run/containerd"
#subreaper = true
#oom_score = 0

#[grpc]
#  address = "/run/containerd/containerd.sock"
#  uid = 0
#  gid = 0

#[debug]
#  address = "/run/containerd/debug.sock"
#  uid = 0
#  gid = 0
#  level = "info"
TOML
svc_postinst containerd.service restart
build

pkg containerd 1.6.20~ds1-1+b1 amd64 "runc (>= 1.0.0~rc94), gpuctl-emu-common" "daemon to control runC" "Conflicts: containerd.io"
CTD_FLAVOUR=debian CTD_VER=1.6.20~ds1
inst "$B/containerd" /usr/bin/containerd
inst "$U/containerd.service" /lib/systemd/system/containerd.service 0644
svc_postinst containerd.service restart
build
CTD_FLAVOUR=containerd.io CTD_VER=$CONTAINERD_VERSION

pkg docker-ce-cli "5:$DOCKER_VERSION-1~debian.12~bookworm" amd64 "gpuctl-emu-common" "Docker CLI: the open-source application container engine"
inst "$B/docker" /usr/bin/docker; build

pkg docker-ce "5:$DOCKER_VERSION-1~debian.12~bookworm" amd64 "containerd.io (>= 1.7.27), docker-ce-cli, gpuctl-emu-common" \
  "Docker: the open-source application container engine"
inst "$B/dockerd" /usr/bin/dockerd
inst "$U/docker.service" /usr/lib/systemd/system/docker.service 0644
mkdir -p "$P/etc/docker"
svc_postinst "docker.service" restart
sed -i '3i getent group docker >/dev/null || groupadd --system docker || true' "$P/DEBIAN/postinst"
build

pkg cri-dockerd "$CRID_VERSION.3-0.debian-bookworm" amd64 "gpuctl-emu-common" "Docker Engine CRI shim (cri-dockerd)" "Recommends: docker-ce"
inst "$B/cri-dockerd" /usr/bin/cri-dockerd
inst "$U/cri-docker.service" /usr/lib/systemd/system/cri-docker.service 0644
inst "$U/cri-docker.socket" /usr/lib/systemd/system/cri-docker.socket 0644
svc_postinst "cri-docker.socket cri-docker.service" restart
build

pkg nvidia-container-toolkit-base "$CTK_VERSION-1" amd64 "gpuctl-emu-common" "NVIDIA Container Toolkit Base"
inst "$B/nvidia-ctk" /usr/bin/nvidia-ctk
inst "$B/nvidia-container-runtime" /usr/bin/nvidia-container-runtime
mkdir -p "$P/etc/nvidia-container-runtime"
printf '#accept-nvidia-visible-devices-as-volume-mounts = false\n#accept-nvidia-visible-devices-envvar-when-unprivileged = true\ndisable-require = false\nsupported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"\n\n[nvidia-container-cli]\nenvironment = []\nldconfig = "@/sbin/ldconfig.real"\nload-kmods = true\n\n[nvidia-container-runtime]\nlog-level = "info"\nmode = "auto"\nruntimes = ["runc", "crun"]\n' > "$P/etc/nvidia-container-runtime/config.toml"
build

pkg nvidia-container-toolkit "$CTK_VERSION-1" amd64 "nvidia-container-toolkit-base (= $CTK_VERSION-1)" "NVIDIA Container toolkit"
mkdir -p "$P/usr/bin"
printf '#!/bin/sh\necho "nvidia-container-runtime-hook: the test bed runs no containers" >&2\nexit 1\n' > "$P/usr/bin/nvidia-container-runtime-hook"
chmod 0755 "$P/usr/bin/nvidia-container-runtime-hook"
ln -s nvidia-container-runtime-hook "$P/usr/bin/nvidia-container-toolkit"
build

pkg nvidia-driver-emu "$DRIVER_VERSION-1" amd64 "gpuctl-emu-common" "NVIDIA driver stand-in for GPU hosts of the test bed (nvidia-smi)"
inst "$B/nvidia-smi" /usr/bin/nvidia-smi
inst "$HERE/lib/proc-driver-nvidia-version" /usr/lib/gpuctl-emu/nvidia-driver/version 0644
# the kernel modules for the bed's emulated modprobe (nvidia_drm needs nvidia_modeset needs nvidia), their hook
mkdir -p "$P/usr/lib/gpuctl-testbed/modules.available.d"
printf '# nvidia-driver-emu: the NVIDIA kernel modules (NAME DEPENDENCIES...)\nnvidia\nnvidia_modeset nvidia\nnvidia_drm nvidia_modeset nvidia\nnvidia_uvm nvidia\n' \
  > "$P/usr/lib/gpuctl-testbed/modules.available.d/nvidia.list"
inst "$HERE/lib/nvidia-module" /usr/lib/gpuctl-testbed/modules.hooks.d/nvidia
inst "$HERE/lib/nvml-generator" /usr/lib/systemd/system-generators/gpuctl-emu-nvml
inst "$B/nvidia-persistenced" /usr/bin/nvidia-persistenced
inst "$U/nvidia-persistenced.service" /lib/systemd/system/nvidia-persistenced.service 0644
script postinst 'mkdir -p /etc/gpuctl-testbed
[ -e /etc/gpuctl-testbed/driver-version ] || cp /usr/lib/gpuctl-emu/nvidia-driver/version /etc/gpuctl-testbed/driver-version'
build
