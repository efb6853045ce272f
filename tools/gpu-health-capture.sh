#!/bin/bash
# Captures, on a machine with an NVIDIA GPU (an H200 here), what gpuctl's GPU health, driver-hold and idle-GPU checks read:
# the outputs with the GPU idle, held by a process that does nothing, and busy. Needs python3 and libcuda only
# (a PTX kernel loaded through the CUDA driver API); nothing is installed, no GPU setting is changed.
# Run: OUT=DIR bash tools/gpu-health-capture.sh (on the GPU machine); its files go to src/test/resources/h200/health/.
set -u
out=${OUT:?}
cap() { # cap FILE COMMAND...: stdout, then stderr and the exit status in FILE.err
  local f=$1; shift
  "$@" > "$out/$f" 2> "$out/$f.err"; echo "exit $?" >> "$out/$f.err"
}
Q=index,uuid,utilization.gpu,utilization.memory,memory.used,memory.total
{
  echo "== uname -r"; uname -r
  echo "== os-release"; cat /etc/os-release
  echo "== /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version
  echo "== nvidia packages (dpkg -l)"; dpkg -l 2>/dev/null | awk '$2 ~ /nvidia|cuda|libnvidia/ {print $1, $2, $3}'
  echo "== apt-mark showhold"; apt-mark showhold 2>&1
  echo "== unattended-upgrades config"; ls /etc/apt/apt.conf.d/ 2>&1; grep -n "Blacklist" -A6 /etc/apt/apt.conf.d/50unattended-upgrades 2>&1 | head -20
  echo "== kernel log NVRM lines (journalctl -k -b)"; journalctl -k -b --no-pager 2>&1 | grep -iE "nvrm|xid" | head -20
  echo "== dmesg NVRM lines"; dmesg 2>&1 | grep -iE "nvrm|xid" | head -20
  echo "== lsmod nvidia"; lsmod 2>&1 | grep -i nvidia
  echo "== nvidia-smi -q -d PERSISTENCE_MODE? (persistence_mode query)"; nvidia-smi --query-gpu=persistence_mode --format=csv 2>&1
} > "$out/machine.txt" 2>&1

python3 - "$out" <<'PY'
import ctypes, os, subprocess, sys, time, threading
out = sys.argv[1]
def run(name, *cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    open(os.path.join(out, name), "w").write(r.stdout)
    open(os.path.join(out, name + ".err"), "w").write(r.stderr + "exit %d\n" % r.returncode)
Q = "index,uuid,utilization.gpu,utilization.memory,memory.used,memory.total"
cuda = ctypes.CDLL("libcuda.so.1")
def ok(rc, what):
    if rc != 0: raise SystemExit("%s failed: CUDA error %d" % (what, rc))
ok(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int(); ok(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p(); ok(cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
ptr = ctypes.c_uint64(); ok(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(8 << 30)), "cuMemAlloc 8 GiB")
time.sleep(6)
# held, idle: a context and 8 GiB, no kernel running
run("held-idle-query-compute-apps.csv", "nvidia-smi", "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv")
run("held-idle-query-compute-apps-noheader.csv", "nvidia-smi", "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits")
run("held-idle-query-gpu.csv", "nvidia-smi", "--query-gpu=" + Q, "--format=csv,noheader,nounits")
run("held-idle-q-d-UTILIZATION.txt", "nvidia-smi", "-q", "-d", "UTILIZATION")
# busy: a kernel that spins on every SM for ~40 s
# a loop whose result is stored, so that the compiler cannot drop it: an LCG step per iteration
ptx = b"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 n, .param .u64 dst) {
  .reg .u64 %r<6>; .reg .pred %p;
  ld.param.u64 %r1, [n]; ld.param.u64 %r4, [dst]; mov.u64 %r2, 0; mov.u64 %r3, 1;
L: mad.lo.u64 %r3, %r3, 6364136223846793005, 1442695040888963407; add.u64 %r2, %r2, 1; setp.lt.u64 %p, %r2, %r1; @%p bra L;
  st.global.u64 [%r4], %r3;
  ret;
}
"""
mod = ctypes.c_void_p(); ok(cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx + b"\0")), "cuModuleLoadData")
fn = ctypes.c_void_p(); ok(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin"), "cuModuleGetFunction")
n = ctypes.c_uint64(int(os.environ.get("SPIN", "2000000000")))
args = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.pointer(n), ctypes.c_void_p), ctypes.cast(ctypes.pointer(ptr), ctypes.c_void_p))
t0 = time.time()
ok(cuda.cuLaunchKernel(fn, 528, 1, 1, 128, 1, 1, 0, None, args, None), "cuLaunchKernel")
time.sleep(8)
run("busy-query-compute-apps.csv", "nvidia-smi", "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv")
run("busy-query-gpu.csv", "nvidia-smi", "--query-gpu=" + Q, "--format=csv,noheader,nounits")
run("busy-q-d-UTILIZATION.txt", "nvidia-smi", "-q", "-d", "UTILIZATION")
run("busy-nvidia-smi.txt", "nvidia-smi")
samples = []
for i in range(5):
    r = subprocess.run(["nvidia-smi", "--query-gpu=timestamp,index,utilization.gpu,memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True)
    samples.append(r.stdout)
    time.sleep(1)
open(os.path.join(out, "busy-samples.csv"), "w").write("".join(samples))
# the process ends with the kernel still running: the driver tears its context down
open(os.path.join(out, "machine.txt"), "a").write("== busy kernel launched %.1f s before the end of the captures\n" % (time.time() - t0))
PY
echo "python exit $?" >> "$out/machine.txt"
cap idle-query-compute-apps.csv nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv
ls -la "$out"
