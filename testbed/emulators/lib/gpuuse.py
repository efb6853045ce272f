# GPU use on the test bed: which container the kubelet gave which GPU, and how hard it drives it.
#  - the kubelet writes its device-manager checkpoint (/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint)
#    in the kubelet's format (pkg/kubelet/cm/devicemanager/checkpoint: Data.PodDeviceEntries[] with PodUID,
#    ContainerName, ResourceName, DeviceIDs as a map NUMA node -> IDs, AllocResp the base64 protobuf
#    ContainerAllocateResponse carrying NVIDIA_VISIBLE_DEVICES; Data.RegisteredDevices; Checksum) when a GPU pod runs
#    on its node, and drops a pod's entries when the pod no longer runs there; with time-slicing or MPS the IDs are
#    the device plugin's replicas, "UUID::N";
#  - a running container whose environment sets GPUCTL_TESTBED_GPU_UTIL=N (1-100) keeps its GPUs at about N %
#    utilisation; without it (or 0) it holds them idle: memory allocated, no kernel running (the H200 capture
#    held-idle-lms500.csv). nvidia-smi's utilization.gpu, utilization.memory and memory.used show it.
import base64, json, random, subprocess, zlib
import emu

CHECKPOINT = "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint"
USE = "/run/gpuctl-testbed/gpu-use.json"
UTIL_ENV = "GPUCTL_TESTBED_GPU_UTIL"
RESOURCE = "nvidia.com/gpu"
HELD_MIB = 21007   # memory.used of the H200 while a process held 20 GiB and a CUDA context (held-idle-lms500.csv)
BUSY_MIB = 21887   # ... and while a kernel ran on it (busy-lms500.csv)


def gpu_uuids():
    """The GPUs' UUIDs as the device plugin reads them (through the driver); [] when nvidia-smi fails."""
    smi = emu.which("nvidia-smi")
    if not smi:
        return []
    r = subprocess.run([smi, "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True)
    return [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("GPU-")] if r.returncode == 0 else []


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _field(num, data):
    return bytes([(num << 3) | 2]) + _varint(len(data)) + data


def alloc_resp(ids):
    """ContainerAllocateResponse{envs: {NVIDIA_VISIBLE_DEVICES: ids}} as protobuf, base64 (what the kubelet keeps)."""
    entry = _field(1, b"NVIDIA_VISIBLE_DEVICES") + _field(2, ",".join(ids).encode())
    return base64.b64encode(_field(1, entry)).decode()


def _util(container):
    try:
        return max(0, min(100, int(str((container.get("env") or {}).get(UTIL_ENV) or "0").strip())))
    except ValueError:
        return 0


def sync(pods, replicas):
    """pods: the GPU pods running on this node, as the API server lists them in the heartbeat's answer:
    [{"uid", "containers": [{"name", "gpus", "env"}]}], in the order they were bound."""
    uuids = gpu_uuids()
    if not uuids:
        return
    replicas = max(1, int(replicas or 1))
    devices = [u if replicas == 1 else "%s::%d" % (u, r) for u in uuids for r in range(replicas)]
    old = (emu.read_json(CHECKPOINT) or {}).get("Data") or {}
    have = {}
    for e in old.get("PodDeviceEntries") or []:
        have[(e.get("PodUID"), e.get("ContainerName"), e.get("ResourceName"))] = e
    running = {(p["uid"], c["name"], RESOURCE): c for p in pods for c in p.get("containers") or [] if int(c.get("gpus") or 0) > 0}
    entries = [e for k, e in have.items() if k in running]
    taken = set(i for e in entries for ids in (e.get("DeviceIDs") or {}).values() for i in ids)
    for p in pods:
        for c in p.get("containers") or []:
            k = (p["uid"], c["name"], RESOURCE)
            n = int(c.get("gpus") or 0)
            if n <= 0 or k in have:
                continue
            free = [d for d in devices if d not in taken]
            if len(free) < n:
                continue
            got = free[:n]
            taken.update(got)
            entries.append({"PodUID": p["uid"], "ContainerName": c["name"], "ResourceName": RESOURCE,
                            "DeviceIDs": {"0": got}, "AllocResp": alloc_resp(got)})
    data = {"PodDeviceEntries": entries, "RegisteredDevices": {RESOURCE: devices}}
    if data != old or not emu.exists(CHECKPOINT):
        # the real Checksum is an FNV-32a hash of the Go value; nothing reads it here, so a CRC of the data stands in
        emu.write(CHECKPOINT, json.dumps({"Data": data, "Checksum": zlib.crc32(json.dumps(data, sort_keys=True).encode())},
                                         separators=(",", ":")), 0o600)
    use = {}
    for e in entries:
        c = running[(e["PodUID"], e["ContainerName"], e["ResourceName"])]
        for ids in e["DeviceIDs"].values():
            for i in ids:
                u = i.split("::")[0]
                use[u] = max(use.get(u, 0), _util(c))
    if emu.read_json(USE) != use:
        emu.write_json(USE, use)


def apply(gs):
    """Sets utilization.gpu, utilization.memory and memory.used of nvidia-smi's GPUs from what holds them."""
    use = emu.read_json(USE) or {}
    for g in gs:
        g.setdefault("utilization.memory", 0)
        if g["uuid"] not in use:
            continue
        util = int(use[g["uuid"]])
        if util > 0:
            util = max(1, min(100, util + random.randint(-2, 2)))
        g["utilization.gpu"] = util
        g["utilization.memory"] = round(util * 0.23)
        g["memory.used"] = BUSY_MIB if util > 0 else HELD_MIB
        g["memory.free"] = g["memory.total"] - g["memory.used"]
