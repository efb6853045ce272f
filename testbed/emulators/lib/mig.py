"""MIG and GPU models for the nvidia-smi emulator (installed as /usr/lib/gpuctl-emu/mig.py).

The GPU model is a host setting: /etc/gpuctl-testbed/gpu-model (default "NVIDIA H200"). The H200 has MIG and the
real H200's profile table (fixtures/real/nvidia-smi-mig-lgip_h200.txt, placements from `nvidia-smi mig -lgipp`);
"NVIDIA GeForce RTX 4090" and "Tesla T4" have none: their mig.mode fields are [N/A], `nvidia-smi mig -lgip` answers
"No MIG-supported devices found." (exit 6) and `nvidia-smi -mig 1` "Unable to enable MIG Mode ... Not Supported".
MIG mode survives a reboot (/var/lib/gpuctl-emu/mig-mode.json); GPU instances do not (/run/gpuctl-emu/mig.json), as on
real GPUs. /etc/gpuctl-testbed/mig-needs-reboot makes `-mig 1` leave the mode pending until the next boot (a GPU that
could not be reset). Outputs follow NVIDIA's MIG user guide (the H200 fixture runs with MIG disabled).
"""
import hashlib, json, os, sys
sys.path.insert(0, "/usr/lib/gpuctl-emu")
import emu

MODEL_FILE = emu.TESTBED + "/gpu-model"
NEEDS_REBOOT = emu.TESTBED + "/mig-needs-reboot"
MODE_STATE = "/var/lib/gpuctl-emu/mig-mode.json"
INSTANCES = "/run/gpuctl-emu/mig.json"
BOOT_ID = "/proc/sys/kernel/random/boot_id"

# the real H200's -lgip rows (GPU 0, all free) and -lgipp placements: name -> (id, total, row text, placements, size)
H200_ROWS = [
    ("1g.18gb", 19, 7, "|   0  MIG 1g.18gb         19     7/7        16.00      No     16     1     0   |",
     "|                                                               1     1     0   |", list(range(7)), 1),
    ("1g.18gb+me", 20, 1, "|   0  MIG 1g.18gb+me      20     1/1        16.00      No     16     1     0   |",
     "|                                                               1     1     1   |", list(range(7)), 1),
    ("1g.35gb", 15, 4, "|   0  MIG 1g.35gb         15     4/4        32.50      No     26     1     0   |",
     "|                                                               1     1     0   |", [0, 2, 4, 6], 2),
    ("2g.35gb", 14, 3, "|   0  MIG 2g.35gb         14     3/3        32.50      No     32     2     0   |",
     "|                                                               2     2     0   |", [0, 2, 4], 2),
    ("3g.71gb", 9, 2, "|   0  MIG 3g.71gb          9     2/2        69.75      No     60     3     0   |",
     "|                                                               3     3     0   |", [0, 4], 4),
    ("4g.71gb", 5, 1, "|   0  MIG 4g.71gb          5     1/1        69.75      No     64     4     0   |",
     "|                                                               4     4     0   |", [0], 4),
    ("7g.141gb", 0, 1, "|   0  MIG 7g.141gb         0     1/1        140.00     No     132    7     0   |",
     "|                                                               8     7     1   |", [0], 8),
]
MODELS = {"NVIDIA H200": {"mem": 143771, "mig": True},
          "NVIDIA GeForce RTX 4090": {"mem": 24564, "mig": False},
          "Tesla T4": {"mem": 15360, "mig": False}}
SEP = "+-------------------------------------------------------------------------------+"
GI_SEP = "+-------------------------------------------------------+"


def model():
    m = (emu.read(MODEL_FILE, "") or "").strip()
    return m if m in MODELS else "NVIDIA H200"


def has_mig():
    return MODELS[model()]["mig"]


def boot_id():
    try:
        with open(BOOT_ID) as f:
            return f.read().strip()
    except OSError:
        return ""


def modes():
    """{index: {"current": ..., "pending": ..., "boot": boot id when set}} with pending applied after a reboot."""
    st = emu.read_json(MODE_STATE, {}) or {}
    changed = False
    for k, v in st.items():
        if v.get("pending") != v.get("current") and v.get("boot") != boot_id():
            v["current"] = v["pending"]; changed = True
    if changed:
        emu.write_json(MODE_STATE, st)
    return st


def mode_of(i):
    v = modes().get(str(i)) or {}
    return v.get("current", "Disabled"), v.get("pending", v.get("current", "Disabled"))


def gpu(g):
    """One GPU of nvidia-smi's list with this host's model and MIG mode."""
    m = model()
    g["name"] = m
    g["memory.total"] = MODELS[m]["mem"]
    g["memory.free"] = MODELS[m]["mem"] - g["memory.used"]
    if has_mig():
        g["mig.mode.current"], g["mig.mode.pending"] = mode_of(g["index"])
    else:
        g["mig.mode.current"] = g["mig.mode.pending"] = "[N/A]"
    return g


def instances():
    return emu.read_json(INSTANCES, {}) or {}


def save_instances(st):
    os.makedirs(emu.R(os.path.dirname(INSTANCES)), exist_ok=True)
    emu.write_json(INSTANCES, st)


def row(name):
    return next((r for r in H200_ROWS if r[0] == name or str(r[1]) == name), None)


def devices(g):
    """The MIG device lines nvidia-smi -L prints under a GPU."""
    if g.get("mig.mode.current") != "Enabled":
        return []
    out = []
    for n, gi in enumerate(sorted(instances().get(str(g["index"]), []), key=lambda x: x["start"])):
        if not gi.get("ci"):
            continue
        u = hashlib.sha256(("%s/%d" % (g["uuid"], gi["id"])).encode()).hexdigest()
        out.append("  MIG %-12s Device %2d: (UUID: MIG-%s-%s-%s-%s-%s)" % (gi["profile"], n, u[0:8], u[8:12], u[12:16], u[16:20], u[20:32]))
    return out


def compute_apps(argv):
    """--query-compute-apps: the bed runs no process on its GPUs (header only without noheader)."""
    fields = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-compute-apps=")), "")
    fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), "")
    if "csv" not in fmt:
        print("--format is required with --query-compute-apps" if not fmt else '"%s" is not a valid format.' % fmt)
        return 2
    if "noheader" not in fmt:
        print(", ".join(f.strip() for f in fields.split(",") if f.strip()))
    return 0


def targets(gs, ids):
    if ids is None:
        return gs
    want = set(ids.split(","))
    return [g for g in gs if str(g["index"]) in want or g["uuid"] in want]


def set_mode(gs, ids, value):
    """nvidia-smi [-i N] -mig 0|1."""
    if value not in ("0", "1"):
        print('Invalid MIG mode "%s". Valid values: 0 (Disable), 1 (Enable).' % value)
        return 2
    want = "Enabled" if value == "1" else "Disabled"
    rc = 0
    st = modes()
    for g in targets(gs, ids):
        if not has_mig():
            print("Unable to %s MIG Mode for GPU %s: Not Supported\nTreating as warning and moving on."
                  % ("enable" if value == "1" else "disable", g["pci.bus_id"]))
            continue
        cur = st.get(str(g["index"]), {}).get("current", "Disabled")
        if want == "Disabled" and instances().get(str(g["index"])):
            print("Unable to disable MIG Mode for GPU %s: In use by another client" % g["pci.bus_id"]); rc = 3; continue
        if emu.exists(NEEDS_REBOOT) and cur != want:
            st[str(g["index"])] = {"current": cur, "pending": want, "boot": boot_id()}
            print("Warning: MIG mode is in pending %s state for GPU %s:Not Supported\nReboot the system or try nvidia-smi --gpu-reset to make MIG mode effective on GPU %s"
                  % ("enable" if value == "1" else "disable", g["pci.bus_id"], g["pci.bus_id"]))
        else:
            st[str(g["index"])] = {"current": want, "pending": want, "boot": boot_id()}
            print("%s MIG Mode for GPU %s" % (want, g["pci.bus_id"]))
    emu.write_json(MODE_STATE, st)
    print("All done.")
    return rc


def lgip(gs):
    mig = [g for g in gs if g["mig.mode.current"] not in ("[N/A]",)]
    if not has_mig() or not mig:
        print("No MIG-supported devices found.")
        return 6
    L = [SEP, "| GPU instance profiles:                                                        |",
         "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |",
         "|                                Free/Total   GiB              CE    JPEG  OFA  |",
         "|===============================================================================|"]
    have = instances()
    first = True
    for g in mig:
        for name, pid, total, line, line2, places, size in H200_ROWS:
            free = len(free_places(have.get(str(g["index"]), []), places, size))
            free = min(free, total)
            if not first:
                L.append(SEP)
            first = False
            L.append(("|%4d " % g["index"]) + line[6:].replace(" %d/%d " % (total, total), " %d/%d " % (free, total), 1))
            L.append(line2)
    L.append(SEP)
    print("\n".join(L))
    return 0


def free_places(gis, places, size):
    used = set()
    for gi in gis:
        used.update(range(gi["start"], gi["start"] + gi["size"]))
    return [p for p in places if not used & set(range(p, p + size))]


def lgi(gs):
    enabled = [g for g in gs if g["mig.mode.current"] == "Enabled"]
    if not enabled:
        print("No MIG-enabled devices found.")
        return 0
    have = instances()
    rows = []
    for g in enabled:
        for gi in sorted(have.get(str(g["index"]), []), key=lambda x: x["id"]):
            rows.append("|%4d  MIG %-12s %5d %8d %12s     |" % (g["index"], gi["profile"], gi["pid"], gi["id"], "%d:%d" % (gi["start"], gi["size"])))
    if not rows:
        print("No GPU instances found: Not Found")
        return 6
    L = [GI_SEP, "| GPU instances:                                        |",
         "| GPU   Name             Profile  Instance   Placement  |",
         "|                          ID       ID       Start:Size |",
         "|=======================================================|"]
    for r in rows:
        L += [r, GI_SEP]
    print("\n".join(L))
    return 0


def cgi(gs, spec, with_ci):
    rc = 0
    have = instances()
    for g in gs:
        if g["mig.mode.current"] != "Enabled":
            print("Unable to create a GPU instance on GPU %2d: MIG mode is not enabled" % g["index"]) if has_mig() else \
                print("No MIG-supported devices found.")
            return 6 if not has_mig() else 3
        gis = have.setdefault(str(g["index"]), [])
        for want in [s.strip() for s in spec.split(",") if s.strip()]:
            r = row(want)
            if r is None:
                print("Unable to create a GPU instance on GPU %2d using profile %s: Invalid Argument" % (g["index"], want))
                print("Failed to create GPU instances: Invalid Argument")
                save_instances(have)
                return 2
            name, pid, total, _l, _l2, places, size = r
            free = free_places(gis, places, size)
            if not free or len([x for x in gis if x["pid"] == pid]) >= total:
                print("Unable to create a GPU instance on GPU %2d using profile %d: Insufficient Resources" % (g["index"], pid))
                print("Failed to create GPU instances: Insufficient Resources")
                save_instances(have)
                return 3
            ids = {x["id"] for x in gis}
            gid = next(i for i in range(1, 15) if i not in ids)
            gis.append({"id": gid, "profile": name, "pid": pid, "start": free[-1], "size": size, "ci": with_ci})
            print("Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)" % (gid, g["index"], name, pid))
            if with_ci:
                print("Successfully created compute instance ID  0 on GPU %2d GPU instance ID %2d using profile MIG %s (ID  0)"
                      % (g["index"], gid, name))
    save_instances(have)
    return rc


def destroy(gs, what):
    have = instances()
    n = 0
    for g in gs:
        gis = have.get(str(g["index"]), [])
        for gi in sorted(gis, key=lambda x: x["id"]):
            if what == "ci" and gi.get("ci"):
                gi["ci"] = False; n += 1
                print("Successfully destroyed compute instance ID  0 from GPU %2d GPU instance ID %2d" % (g["index"], gi["id"]))
            elif what == "gi":
                if gi.get("ci"):
                    print("Unable to destroy GPU instance ID %2d from GPU %2d: In use by another client" % (gi["id"], g["index"]))
                    save_instances(have)
                    return 19
                n += 1
                print("Successfully destroyed GPU instance ID %2d from GPU %2d" % (gi["id"], g["index"]))
        if what == "gi":
            have[str(g["index"])] = []
    save_instances(have)
    if not n:
        print("No %s instances found: Not Found" % ("compute" if what == "ci" else "GPU"))
        return 6
    return 0


def main(argv, gs):
    """nvidia-smi's MIG command lines: `mig -lgip|-lgi|-cgi LIST [-C]|-dci|-dgi [-i N]`, `[-i N] -mig 0|1`,
    `--query-compute-apps=... --format=csv[,noheader]`."""
    if any(a.startswith("--query-compute-apps") for a in argv):
        return compute_apps(argv)
    ids = None
    for flag in ("-i", "--id"):
        if flag in argv and argv.index(flag) + 1 < len(argv):
            ids = argv[argv.index(flag) + 1]
    gs = targets(gs, ids)
    if ids is not None and not gs:
        print("No devices were found")
        return 6
    if argv[:1] != ["mig"]:
        for flag in ("-mig", "--multi-instance-gpu"):
            if flag in argv and argv.index(flag) + 1 < len(argv):
                return set_mode(gs, None, argv[argv.index(flag) + 1])
        print("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
        return 2
    rest = argv[1:]
    if not has_mig() and any(a in rest for a in ("-lgip", "-lgi", "-cgi", "-dci", "-dgi", "-lgipp")):
        print("No MIG-supported devices found.")
        return 6
    if "-lgip" in rest or "--list-gpu-instance-profiles" in rest:
        return lgip(gs)
    if "-lgi" in rest or "--list-gpu-instances" in rest:
        return lgi(gs)
    if "-cgi" in rest or "--create-gpu-instance" in rest:
        flag = "-cgi" if "-cgi" in rest else "--create-gpu-instance"
        spec = rest[rest.index(flag) + 1] if rest.index(flag) + 1 < len(rest) else ""
        return cgi(gs, spec, "-C" in rest or "--default-compute-instance" in rest)
    if "-dci" in rest:
        return destroy(gs, "ci")
    if "-dgi" in rest:
        return destroy(gs, "gi")
    print("Invalid combination of input arguments. Please run 'nvidia-smi mig -h' for help.\n")
    return 2


def device_profiles():
    """The MIG devices nvidia-smi -L lists on this host, by profile (for the kubelet's heartbeat): [] without any."""
    if not has_mig():
        return []
    out = []
    for k, gis in instances().items():
        if mode_of(int(k))[0] == "Enabled":
            out += [gi["profile"] for gi in gis if gi.get("ci")]
    return out


def mig_enabled_gpus():
    return len([k for k, v in modes().items() if v.get("current") == "Enabled"]) if has_mig() else 0


def plugin_resources(gpus, enabled, profiles, cfg):
    """What the device plugin advertises with its config's MIG strategy, as the k8s-device-plugin README says: none,
    every GPU as nvidia.com/gpu; single, every MIG device as nvidia.com/gpu (all of one profile, else an error);
    mixed, nvidia.com/mig-PROFILE per profile and the GPUs without MIG as nvidia.com/gpu. Returns (resources, error)."""
    strategy = (((cfg or {}).get("flags") or {}).get("migStrategy") or "none")
    if strategy == "single":
        if len(set(profiles)) > 1:
            return None, "error starting plugins: at least one device with migEnabled=true was not configured correctly: more than one MIG device type present on node"
        if enabled and enabled != gpus:
            return None, "error starting plugins: all devices on the node must be configured with the same migEnabled value"
        return ({"nvidia.com/gpu": str(len(profiles))} if enabled else None), None
    if strategy == "mixed":
        r = {"nvidia.com/gpu": str(gpus - enabled)}
        for p in profiles:
            r["nvidia.com/mig-" + p] = str(int(r.get("nvidia.com/mig-" + p, "0")) + 1)
        return r, None
    return None, None
