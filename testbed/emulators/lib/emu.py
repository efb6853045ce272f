"""Shared helpers for the gpuctl test-bed emulators (installed as /usr/lib/gpuctl-emu/emu.py).

Every path goes through R() so that the emulators can be exercised outside a bed host by
setting GPUCTL_EMU_ROOT to a scratch directory (systemctl calls are skipped then).
"""
import base64, datetime, hashlib, hmac, http.client, http.server, json, os, re, shutil, socket
import socketserver, ssl, subprocess, sys, tempfile, time

ROOT = os.environ.get("GPUCTL_EMU_ROOT", "").rstrip("/")
STATE = "/var/lib/gpuctl-emu"          # per-host emulator state (docker's loaded config, ...)
TESTBED = "/etc/gpuctl-testbed"        # knobs the bed sets (gpus, driver state)


def R(path):
    return ROOT + path if ROOT and path.startswith("/") else path


# ---------------------------------------------------------------- files
def read(path, default=None):
    try:
        with open(R(path), encoding="utf-8") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return default


def write(path, content, mode=0o644):
    p = R(path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    tmp = p + ".emu-tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w", encoding="utf-8") as f:
        f.write(content)
    os.chmod(tmp, mode)
    os.replace(tmp, p)


def exists(path):
    return os.path.exists(R(path))


def remove(path):
    p = R(path)
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.lexists(p):
        os.remove(p)


def read_json(path, default=None):
    t = read(path)
    if t is None:
        return default
    try:
        return json.loads(t)
    except ValueError:
        return default


def write_json(path, obj, mode=0o644):
    write(path, json.dumps(obj, indent=2, sort_keys=True) + "\n", mode)


# ---------------------------------------------------------------- yaml
def yaml_docs(text):
    import yaml
    return [d for d in yaml.safe_load_all(text) if d is not None]


def yaml_dump(obj):
    import yaml
    return yaml.safe_dump(obj, default_flow_style=False, sort_keys=False)


# ---------------------------------------------------------------- time
def now():
    return time.time()


def rfc3339(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


_DUR = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")


def parse_duration(s):
    """Go time.ParseDuration subset; returns seconds (float) or raises ValueError."""
    s = str(s).strip()
    if s in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    mult = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    for m in _DUR.finditer(s):
        if m.start() != pos:
            raise ValueError(s)
        total += float(m.group(1)) * mult[m.group(2)]
        pos = m.end()
    if pos != len(s):
        raise ValueError(s)
    return total


def go_duration(sec):
    sec = float(sec)
    h, rem = divmod(int(sec), 3600)
    m, s = divmod(rem, 60)
    frac = sec - int(sec)
    out = ""
    if h:
        out += "%dh" % h
    if h or m:
        out += "%dm" % m
    out += ("%ds" % s) if not frac else ("%s" % ("%.3f" % (s + frac)).rstrip("0").rstrip(".") + "s")
    return out


def age(sec):
    """kubectl's HumanDuration (short form)."""
    sec = int(max(sec, 0))
    if sec < 120:
        return "%ds" % sec
    m = sec // 60
    if m < 10:
        s = sec % 60
        return "%dm%ds" % (m, s) if s else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = sec // 3600
    if h < 8:
        mm = m % 60
        return "%dh%dm" % (h, mm) if mm else "%dh" % h
    if h < 48:
        return "%dh" % h
    d = h // 24
    if d < 8:
        hh = h % 24
        return "%dd%dh" % (d, hh) if hh else "%dd" % d
    return "%dd" % d


def klog(level, src, msg, stream=None):
    """Print one klog-formatted line: I1202 10:08:29.123456    1234 file.go:12] msg"""
    t = datetime.datetime.now()
    line = "%s%s %s %7d %s] %s" % (level, t.strftime("%m%d"), t.strftime("%H:%M:%S.%f"), os.getpid(), src, msg)
    print(line, file=stream or sys.stderr, flush=True)
    return line


def klog_line(level, src, msg, t=None, pid=1):
    t = datetime.datetime.fromtimestamp(t or now())
    return "%s%s %s %7d %s] %s" % (level, t.strftime("%m%d"), t.strftime("%H:%M:%S.%f"), pid, src, msg)


# ---------------------------------------------------------------- host facts
def systemd_running():
    return not ROOT and os.path.isdir("/run/systemd/system")


def systemctl(*args, check=False):
    if not systemd_running():
        return 0
    r = subprocess.run(["systemctl", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode


def unit_active(unit):
    if not systemd_running():
        return False
    return subprocess.run(["systemctl", "is-active", "--quiet", unit]).returncode == 0


def swap_active():
    lines = [l for l in (read("/proc/swaps", "") or "").splitlines() if l.strip()]
    return len(lines) > 1


def sysctl(key):
    v = read("/proc/sys/" + key.replace(".", "/"))
    return None if v is None else v.strip()


def hostname():
    return (read("/etc/hostname") or socket.gethostname()).strip().split(".")[0].lower()


def which(name):
    if name.startswith("/"):
        return name if os.access(R(name), os.X_OK) else None
    for d in os.environ.get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin").split(":"):
        p = os.path.join(d, name)
        if os.access(R(p), os.X_OK) and not os.path.isdir(R(p)):
            return p
    return None


def port_in_use(port, host="0.0.0.0"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((host, port))
        return False
    except OSError:
        return True
    finally:
        s.close()


def socket_answers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(R(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def is_socket(path):
    import stat
    try:
        return stat.S_ISSOCK(os.stat(R(path)).st_mode)
    except OSError:
        return False


# ---------------------------------------------------------------- HTTP over unix sockets (docker, CRI)
class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        req, _ = super().get_request()
        return req, ("local", 0)


def serve_unix(path, handler_cls):
    """Serves on a unix socket: the one systemd passes (socket activation, LISTEN_FDS), else one bound here."""
    if os.environ.get("LISTEN_FDS") == "1" and os.environ.get("LISTEN_PID") == str(os.getpid()):
        srv = UnixHTTPServer(R(path), handler_cls, bind_and_activate=False)
        srv.socket.close()
        srv.socket = socket.socket(fileno=3)
        return srv
    p = R(path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    if os.path.lexists(p):
        os.remove(p)
    srv = UnixHTTPServer(p, handler_cls)
    os.chmod(p, 0o660)
    return srv


class _UnixConn(http.client.HTTPConnection):
    def __init__(self, path, timeout=5):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(R(self._path))


def unix_request(path, method, url, body=None, timeout=5):
    """Returns (status, parsed-json-or-text) or raises OSError if nobody answers."""
    c = _UnixConn(path, timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        c.request(method, url, body=data, headers={"Content-Type": "application/json", "Host": "localhost"})
        r = c.getresponse()
        raw = r.read().decode()
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, raw
    finally:
        c.close()


class JSONHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "emu"

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode()

    def send(self, code, obj, ctype="application/json"):
        data = obj if isinstance(obj, bytes) else (obj if isinstance(obj, str) else json.dumps(obj)).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# ---------------------------------------------------------------- TLS / PKI (openssl)
def openssl(*args, inp=None):
    r = subprocess.run(["openssl", *args], input=inp, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (args[0], r.stderr.strip()))
    return r.stdout


def _tmpdir():
    base = R("/run/gpuctl-emu") if os.path.isdir(R("/run")) else None
    if base:
        os.makedirs(base, mode=0o700, exist_ok=True)
    return tempfile.mkdtemp(dir=base)


def gen_key():
    return openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")


def gen_ca(cn, days=3650):
    d = _tmpdir()
    try:
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/k", "-out", d + "/c",
                "-days", str(days), "-subj", "/CN=" + cn,
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign")
        return open(d + "/c").read(), open(d + "/k").read()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def make_csr(cn, orgs=(), key=None):
    d = _tmpdir()
    try:
        key = key or gen_key()
        open(d + "/k", "w").write(key)
        subj = "".join("/O=" + o for o in orgs) + "/CN=" + cn
        csr = openssl("req", "-new", "-key", d + "/k", "-subj", subj)
        return csr, key
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sign_csr(csr, ca_crt, ca_key, days=365, server_sans=None, client=True):
    d = _tmpdir()
    try:
        open(d + "/csr", "w").write(csr)
        open(d + "/ca.crt", "w").write(ca_crt)
        open(d + "/ca.key", "w").write(ca_key)
        eku = []
        if server_sans is not None:
            eku.append("serverAuth")
        if client:
            eku.append("clientAuth")
        ext = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        ext += "extendedKeyUsage=" + ",".join(eku) + "\n"
        if server_sans:
            ext += "subjectAltName=" + ",".join(server_sans) + "\n"
        open(d + "/ext", "w").write(ext)
        return openssl("x509", "-req", "-in", d + "/csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
                       "-set_serial", str(int.from_bytes(os.urandom(8), "big")), "-days", str(days),
                       "-sha256", "-extfile", d + "/ext")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gen_signed(cn, orgs, ca_crt, ca_key, server_sans=None, client=True):
    csr, key = make_csr(cn, orgs)
    return sign_csr(csr, ca_crt, ca_key, server_sans=server_sans, client=client), key


def csr_subject(csr):
    out = openssl("req", "-noout", "-subject", "-nameopt", "RFC2253", inp=csr).strip()
    out = out.split("=", 1)[1] if out.startswith("subject=") else out
    cn, orgs = "", []
    for part in out.split(","):
        k, _, v = part.strip().partition("=")
        if k == "CN":
            cn = v
        elif k == "O":
            orgs.append(v)
    return cn, orgs


def spki_sha256(cert_pem):
    """kubeadm's --discovery-token-ca-cert-hash value: sha256 of the DER SubjectPublicKeyInfo."""
    pub = openssl("x509", "-pubkey", "-noout", inp=cert_pem)
    r = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pub.encode(), capture_output=True)
    return "sha256:" + hashlib.sha256(r.stdout).hexdigest()


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def unb64(s):
    return base64.b64decode(s).decode()


def _b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jws_detached(content, token_id, token_secret):
    """k8s.io/cluster-bootstrap/token/jws ComputeDetachedSignature (HS256, kid = token id)."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    payload = _b64url(content.encode())
    sig = hmac.new(token_secret.encode(), (header + "." + payload).encode(), hashlib.sha256).digest()
    return header + ".." + _b64url(sig)


def jws_valid(detached, content, token_id, token_secret):
    return hmac.compare_digest(detached, jws_detached(content, token_id, token_secret))


# ---------------------------------------------------------------- kubeconfig + API client
def kubeconfig(server, ca_pem, user, cert_pem=None, key_pem=None, token=None, cluster="kubernetes",
               cert_file=None, key_file=None):
    u = {}
    if cert_pem:
        u["client-certificate-data"] = b64(cert_pem)
    if key_pem:
        u["client-key-data"] = b64(key_pem)
    if cert_file:
        u["client-certificate"] = cert_file
    if key_file:
        u["client-key"] = key_file
    if token:
        u["token"] = token
    ctx = "%s@%s" % (user, cluster)
    return yaml_dump({
        "apiVersion": "v1",
        "clusters": [{"cluster": {"certificate-authority-data": b64(ca_pem), "server": server}, "name": cluster}],
        "contexts": [{"context": {"cluster": cluster, "user": user}, "name": ctx}],
        "current-context": ctx,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": user, "user": u}],
    })


class ApiError(Exception):
    def __init__(self, kind, msg, status=None, body=None):
        super().__init__(msg)
        self.kind, self.status, self.body = kind, status, body


class Client:
    """A tiny Kubernetes API client (JSON over HTTPS) configured from a kubeconfig."""

    def __init__(self, server, ca=None, cert=None, key=None, token=None, insecure=False, timeout=10):
        self.server, self.ca, self.cert, self.key, self.token = server.rstrip("/"), ca, cert, key, token
        self.insecure, self.timeout = insecure, timeout
        m = re.match(r"^(https?)://([^/:]+|\[[^\]]+\])(?::(\d+))?", self.server)
        if not m:
            raise ApiError("config", "invalid server URL %r" % server)
        self.scheme, self.host = m.group(1), m.group(2).strip("[]")
        self.port = int(m.group(3) or (443 if self.scheme == "https" else 80))
        self.hostport = m.group(2) + ":" + str(self.port)

    @classmethod
    def from_kubeconfig(cls, path, timeout=10):
        text = read(path)
        if text is None:
            raise ApiError("config", "stat %s: no such file or directory" % path)
        cfg = yaml_docs(text)[0]
        cur = cfg.get("current-context")
        ctx = next((c["context"] for c in cfg.get("contexts") or [] if c["name"] == cur), None)
        if ctx is None and cfg.get("contexts"):
            ctx = cfg["contexts"][0]["context"]
        cl = next((c["cluster"] for c in cfg.get("clusters") or [] if ctx and c["name"] == ctx.get("cluster")), {})
        us = next((u.get("user") or {} for u in cfg.get("users") or [] if ctx and u["name"] == ctx.get("user")), {})
        ca = unb64(cl["certificate-authority-data"]) if cl.get("certificate-authority-data") else \
            read(cl["certificate-authority"]) if cl.get("certificate-authority") else None
        cert = unb64(us["client-certificate-data"]) if us.get("client-certificate-data") else \
            read(us["client-certificate"]) if us.get("client-certificate") else None
        key = unb64(us["client-key-data"]) if us.get("client-key-data") else \
            read(us["client-key"]) if us.get("client-key") else None
        return cls(cl.get("server", "http://localhost:8080"), ca, cert, key, us.get("token"),
                   insecure=bool(cl.get("insecure-skip-tls-verify")), timeout=timeout)

    def _ctx(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if self.insecure or not self.ca:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx.load_verify_locations(cadata=self.ca)
            ctx.check_hostname = False   # IP SANs are checked by hand below (python lacks IP SAN matching pre-3.7 quirks)
        if self.cert and self.key:
            d = _tmpdir()
            try:
                open(d + "/c", "w").write(self.cert)
                open(d + "/k", "w").write(self.key)
                ctx.load_cert_chain(d + "/c", d + "/k")
            finally:
                shutil.rmtree(d, ignore_errors=True)
        return ctx

    def request(self, method, path, body=None, ctype="application/json", raw=False):
        if self.scheme == "https":
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self._ctx())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Accept": "application/json", "User-Agent": "gpuctl-emu"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = ctype
        try:
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            text = r.read().decode()
            peer = conn.sock.getpeercert(True) if self.scheme == "https" and conn.sock else None
        except ssl.SSLCertVerificationError as e:
            raise ApiError("tls", "tls: failed to verify certificate: x509: certificate signed by unknown authority")
        except ConnectionRefusedError:
            raise ApiError("refused", "The connection to the server %s was refused - did you specify the right host or port?" % self.hostport)
        except (socket.timeout, TimeoutError):
            raise ApiError("timeout", "Unable to connect to the server: dial tcp %s: i/o timeout" % self.hostport)
        except OSError as e:
            raise ApiError("net", "Unable to connect to the server: dial tcp %s: %s" % (self.hostport, e.strerror or e))
        finally:
            conn.close()
        if raw:
            return r.status, text
        try:
            obj = json.loads(text) if text else {}
        except ValueError:
            obj = {"message": text}
        if r.status >= 400:
            raise ApiError("status", obj.get("message", text), r.status, obj)
        return obj

    def get(self, path):
        return self.request("GET", path)


def local_addr_towards(host, port):
    """The source address this host uses to reach host:port (a UDP connect sends nothing)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((host, port))
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


# ---------------------------------------------------------------- GPUs
def gpu_count():
    """What nvidia-smi says (None when there is no driver or it fails)."""
    smi = which("nvidia-smi")
    if not smi or ROOT:
        return None
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return len([l for l in r.stdout.splitlines() if l.startswith("GPU ")])


def driver_state():
    """'none' (no driver installed), 'unloaded', or 'loaded'."""
    if not exists("/usr/lib/gpuctl-emu/nvidia-driver"):
        return "none"
    if (read(TESTBED + "/driver-state", "loaded") or "loaded").strip() == "unloaded":
        return "unloaded"
    return "loaded"


# ---------------------------------------------------------------- the driver's device nodes and their /dev/char links
NVML_LOST = "/run/gpuctl-testbed/nvml-lost"   # pod UIDs whose containers lost their GPUs' device access (one a line)


def nvidia_devices():
    """The device nodes the NVIDIA driver makes on this host, [(path, major, minor)], numbered as on the real H200
    (src/test/resources/fixtures/real/h200-dev-nvidia.txt): /dev/nvidiaN 195:N, /dev/nvidiactl 195:255,
    /dev/nvidia-uvm 238:0, /dev/nvidia-uvm-tools 238:1, /dev/nvidia-caps/nvidia-cap1 241:1, nvidia-cap2 241:2."""
    try:
        n = int((read(TESTBED + "/gpus", "1") or "1").strip() or "1")
    except ValueError:
        n = 1
    return ([("/dev/nvidia%d" % i, 195, i) for i in range(n)]
            + [("/dev/nvidiactl", 195, 255), ("/dev/nvidia-uvm", 238, 0), ("/dev/nvidia-uvm-tools", 238, 1),
               ("/dev/nvidia-caps/nvidia-cap1", 241, 1), ("/dev/nvidia-caps/nvidia-cap2", 241, 2)])


def make_nvidia_nodes():
    """The driver's device nodes made where missing (what nvidia-modprobe does at the module's load): no /dev/char
    link for them, as the real driver makes none. Returns the paths made."""
    import stat
    made = []
    for path, major, minor in nvidia_devices():
        p = R(path)
        if os.path.lexists(p):
            continue
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(p, 0o666)
        made.append(path)
    return made


def dev_char_missing():
    """The driver's device nodes present without their /dev/char/MAJOR:MINOR link to them: what systemd cannot find
    when it re-applies a container's device rules at a daemon-reload (runc names devices by that path)."""
    out = []
    for path, major, minor in nvidia_devices():
        if not os.path.lexists(R(path)):
            continue
        link = R("/dev/char/%d:%d" % (major, minor))
        if not (os.path.exists(link) and os.path.samefile(link, R(path))):
            out.append((path, major, minor))
    return out


def nvml_lost():
    """The pod UIDs whose containers lost their GPUs at a daemon-reload."""
    return [l.strip() for l in (read(NVML_LOST, "") or "").splitlines() if l.strip()]


# ---------------------------------------------------------------- container runtimes over CRI sockets
CRI_SOCKETS = ["/var/run/containerd/containerd.sock", "/var/run/crio/crio.sock", "/var/run/cri-dockerd.sock"]


def cri_info(endpoint, timeout=3):
    """Ask a CRI endpoint (emulator protocol: JSON over HTTP on the unix socket) for its status.
    Returns dict or raises OSError/ApiError."""
    path = endpoint[len("unix://"):] if endpoint.startswith("unix://") else endpoint
    st, obj = unix_request(path, "GET", "/cri/v1/status", timeout=timeout)
    if st == 501:
        raise ApiError("unimplemented", "rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService")
    if st != 200:
        raise ApiError("status", "rpc error: code = Unknown desc = %s" % (obj.get("message") if isinstance(obj, dict) else obj))
    return obj


# ---------------------------------------------------------------- Go text/template (the subset docker --format uses)
def _go_str(v):
    if v is None:
        return "<nil>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, dict):
        return "map[" + " ".join("%s:%s" % (k, _go_str(v[k])) for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_str(x) for x in v) + "]"
    return str(v)


def _go_path(obj, path):
    if path in (".", ""):
        return obj
    cur = obj
    for part in path.lstrip(".").split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KeyError(part)
    return cur


def go_template(fmt, obj, typename="types.Info"):
    def action(m):
        expr = m.group(1).strip()
        words = re.findall(r'"[^"]*"|\S+', expr)
        try:
            if words[0] == "json":
                return json.dumps(_go_path(obj, words[1]), separators=(",", ":"))
            if words[0] == "index":
                return _go_str(_go_path(obj, words[1]).get(words[2].strip('"')))
            if words[0] in ("upper", "lower"):
                s = _go_str(_go_path(obj, words[1]))
                return s.upper() if words[0] == "upper" else s.lower()
            if words[0].startswith("."):
                return _go_str(_go_path(obj, words[0]))
        except KeyError as e:
            raise ValueError('template: :1:%d: executing "" at <%s>: can\'t evaluate field %s in type %s'
                             % (m.start() + 2, words[-1], e.args[0], typename))
        raise ValueError('template: :1: function "%s" not defined' % words[0])
    return re.sub(r"\{\{-?\s*(.*?)\s*-?\}\}", action, fmt.replace("\\n", "\n").replace("\\t", "\t"))


# ---------------------------------------------------------------- TOML writer (go-toml style, for nvidia-ctk)
def _toml_val(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_val(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (_toml_key(k), _toml_val(x)) for k, x in v.items()) + "}"
    return json.dumps(str(v))


def _toml_key(k):
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k)


def toml_dump(d):
    out = []

    def table(prefix, t, indent):
        scalars = [(k, v) for k, v in t.items() if not isinstance(v, dict)]
        subs = [(k, v) for k, v in t.items() if isinstance(v, dict)]
        if prefix:
            out.append("")
            out.append("  " * (indent - 1) + "[" + ".".join(_toml_key(p) for p in prefix) + "]")
        for k, v in scalars:
            out.append("  " * max(indent, 0) + "%s = %s" % (_toml_key(k), _toml_val(v)))
        for k, v in subs:
            table(prefix + [k], v, indent + 1)
    table([], d, 0)
    return "\n".join(out).lstrip("\n") + "\n"


def containerd_cri_section(conf):
    """(version, runtime-plugin dict) for a containerd config (v2: io.containerd.grpc.v1.cri, v3: io.containerd.cri.v1.runtime)."""
    ver = int(conf.get("version", 1) or 1)
    plugins = conf.setdefault("plugins", {})
    if ver >= 3:
        return ver, plugins.setdefault("io.containerd.cri.v1.runtime", {})
    return ver, plugins.setdefault("io.containerd.grpc.v1.cri", {})
