#!/bin/bash
# Runs gpuctl's GPU probes on a GPU machine that has no Java (the lent H200), keeping what they saw under $OUT.
# Assemble .device/ first (ignored by git; 53 MB, under the 64 MiB a device run may carry):
#   mvn -q package -DskipTests -DbuildDir=/tmp/build-dev
#   jlink --add-modules java.base,java.desktop,java.naming,java.security.jgss,java.sql,java.logging,jdk.crypto.ec,jdk.unsupported \
#         --strip-debug --no-header-files --no-man-pages --compress=2 --output .device/jre
#   cp /tmp/build-dev/gpuctl.jar .device/; mkdir -p .device/lib .device/inv
#   cp /tmp/build-dev/lib/{picocli,snakeyaml,jackson-*,slf4j-*,sshj}-*.jar .device/lib/   (no BouncyCastle: connection: local needs no SSH)
#   a one-node inventory in .device/inv/inventory.yaml: role master, gpu: true, connection: local
# then run `bash tools/device-probes.sh` there, carrying .device. src/test/resources/h200/ holds what it printed.
# Runs gpuctl's GPU probes on this machine (connection: local) and keeps what they saw under $OUT.
cd "$(dirname "$0")/../.device"
export HOME=/tmp/gpuctl-home; mkdir -p "$HOME"
G="./jre/bin/java -jar gpuctl.jar"
F=index,name,uuid,memory.total,driver_version,mig.mode.current,compute_mode,pci.bus_id
{
  echo "== uname"; uname -a; echo "== os-release"; cat /etc/os-release
  echo "== gpuctl --version"; $G --version
} > "$OUT/machine.txt" 2>&1
$G verify --json inv/inventory.yaml > "$OUT/verify.json" 2> "$OUT/verify-json.err"; echo "verify --json exit $?" >> "$OUT/machine.txt"
$G verify inv/inventory.yaml > "$OUT/verify.txt" 2>&1; echo "verify exit $?" >> "$OUT/machine.txt"
$G bootstrap --dry-run --only gpu inv/inventory.yaml > "$OUT/bootstrap-dry-run.txt" 2>&1; echo "bootstrap --dry-run exit $?" >> "$OUT/machine.txt"
cat inv/.gpuctl/logs/*-verify/h200.log > "$OUT/verify-h200.log" 2>&1
for d in inv/.gpuctl/logs/*; do case $d in *-verify) ;; *) cat "$d/h200.log" > "$OUT/bootstrap-dry-run-h200.log" 2>&1;; esac; done
# the exact commands gpuctl runs, one output each, for the parsers' fixtures
{
  echo "### nvidia-smi --query-gpu=$F --format=csv,noheader,nounits"; nvidia-smi --query-gpu=$F --format=csv,noheader,nounits; echo "### exit $?"
  echo "### nvidia-smi --query-gpu=$F --format=csv"; nvidia-smi --query-gpu=$F --format=csv; echo "### exit $?"
  echo "### nvidia-smi -L"; nvidia-smi -L; echo "### exit $?"
  echo "### cat /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version; echo "### exit $?"
  echo "### stat -fc %T /sys/fs/cgroup"; stat -fc %T /sys/fs/cgroup; echo "### exit $?"
} > "$OUT/probes-raw.txt" 2>&1
ls -la "$OUT"
