package dev.gpuctl.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The test bed (testbed/bed): real Debian 12 hosts h0 (master) and h1..h3 (GPU workers) for
 * end-to-end tests. {@link #shared()} brings the bed up once per JVM and takes it down at exit
 * (unless GPUCTL_BED_KEEP=1). The bed's name comes from GPUCTL_BED (default "bed").
 * If the bed cannot start, shared() throws with the bed's own error text: E2E tests fail, never skip.
 */
public final class TestBed {
    public static final int WORKERS = 3;
    private static final Duration BED_TIMEOUT = Duration.ofMinutes(15);
    private static final Duration SSH_TIMEOUT = Duration.ofMinutes(10);

    /** One thread per stream: the common pool has a single thread on a 2-core machine. */
    private static final java.util.concurrent.ExecutorService DRAIN = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "testbed-drain");
        t.setDaemon(true);
        return t;
    });

    private static final Map<String, TestBed> BEDS = new java.util.HashMap<>();
    private static final Map<String, IllegalStateException> FAILURES = new java.util.HashMap<>();

    private final Path repoRoot;
    private final Path script;
    private final Map<String, String> env;
    private final String name;

    private TestBed(Path repoRoot, Map<String, String> env, String name) {
        this.repoRoot = repoRoot;
        this.script = repoRoot.resolve("testbed/bed");
        this.env = env;
        this.name = name;
    }

    /** The bed's name ($GPUCTL_BED for testbed/bed). */
    public String name() { return name; }

    static String baseName() {
        String n = System.getenv("GPUCTL_BED");
        return n == null || n.isBlank() ? "bed" : n;
    }

    /** The shared bed: started on first use (testbed/bed up 3), taken down when the JVM exits. */
    public static TestBed shared() {
        return named(baseName(), WORKERS);
    }

    /**
     * A bed of its own for tests that change hosts in ways other tests must not see (a whole bootstrap):
     * named "$GPUCTL_BED" + SUFFIX (letters and digits, at most 12), started on first use, taken down when the JVM exits.
     */
    public static TestBed own(String suffix, int workers) {
        String name = (baseName() + suffix).replaceAll("[^a-z0-9]", "");
        return named(name.length() > 12 ? name.substring(0, 12) : name, workers);
    }

    /** Takes a bed of one's own down now (instead of at JVM exit), unless GPUCTL_BED_KEEP=1. */
    public void down() {
        synchronized (TestBed.class) {
            BEDS.remove(name);
        }
        if ("1".equals(System.getenv("GPUCTL_BED_KEEP"))) {
            return;
        }
        BedResult r = run(List.of(script.toString(), "down"), Duration.ofMinutes(3), name);
        if (r.exit() != 0) {
            System.err.println("testbed/bed down failed: " + r);
        }
    }

    private static synchronized TestBed named(String name, int workers) {
        if (BEDS.containsKey(name)) {
            return BEDS.get(name);
        }
        if (FAILURES.containsKey(name)) {
            throw FAILURES.get(name);
        }
        Path root = findRepoRoot();
        Path script = root.resolve("testbed/bed");
        BedResult up = run(List.of(script.toString(), "up", Integer.toString(workers)), BED_TIMEOUT, name);
        if (up.exit() != 0) {
            IllegalStateException failure = new IllegalStateException("the test bed did not start: `GPUCTL_BED=" + name
                    + " testbed/bed up " + workers + "` exited " + up.exit() + "\n" + up.err() + up.out());
            FAILURES.put(name, failure);
            // a half-started bed is taken down too
            registerTeardown(script, name);
            throw failure;
        }
        registerTeardown(script, name);
        BedResult envOut = run(List.of(script.toString(), "env"), Duration.ofMinutes(1), name);
        if (envOut.exit() != 0) {
            IllegalStateException failure = new IllegalStateException("`testbed/bed env` failed:\n" + envOut);
            FAILURES.put(name, failure);
            throw failure;
        }
        TestBed bed = new TestBed(root, parseEnv(envOut.out()), name);
        BEDS.put(name, bed);
        return bed;
    }

    private static void registerTeardown(Path script, String name) {
        if ("1".equals(System.getenv("GPUCTL_BED_KEEP"))) {
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            BedResult down = run(List.of(script.toString(), "down"), Duration.ofMinutes(3), name);
            if (down.exit() != 0) {
                System.err.println("testbed/bed down failed: " + down);
            }
        }, "testbed-down"));
    }

    /** Host names, master first: h0, h1, h2, h3. */
    public List<String> hosts() {
        return List.of(env.getOrDefault("BED_HOSTS", "").split(" "));
    }

    public String master() {
        return hosts().get(0);
    }

    public List<String> workers() {
        return hosts().subList(1, hosts().size());
    }

    /** The host's address on the bed's bridge (10.213.X.10 + index). */
    public String address(String host) {
        String a = env.get("BED_ADDR_" + host);
        if (a == null) {
            throw new IllegalArgumentException("no host " + host + " in the bed; hosts: " + hosts());
        }
        return a;
    }

    /** The bed's NTP server (a chronyd on the bridge address). */
    public String ntpServer() {
        return env.get("BED_NTP");
    }

    public String subnet() {
        return env.get("BED_SUBNET");
    }

    public Path clientKey() {
        return Path.of(env.get("BED_CLIENT_KEY"));
    }

    public Path knownHosts() {
        return Path.of(env.get("BED_KNOWN_HOSTS"));
    }

    public Path repoRoot() {
        return repoRoot;
    }

    /** A fresh inventory.yaml for the bed (docker, flannel) in a new temp directory. */
    public Path inventory() {
        return inventory("docker", "flannel");
    }

    public Path inventory(String runtime) {
        return inventory(runtime, "flannel");
    }

    public Path inventory(String runtime, String cni) {
        return inventory(List.of("--runtime", runtime, "--cni", cni));
    }

    /**
     * The bed's inventory with {@code storage.nfs} served by {@code nfsServer}: /export/dataset read-only,
     * /export/ckpt read-write (docker, flannel).
     */
    public Path inventoryWithNfs(String nfsServer) {
        return inventory(List.of("--runtime", "docker", "--cni", "flannel", "--nfs", nfsServer));
    }

    private Path inventory(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("inventory"));
        cmd.addAll(args);
        BedResult r = bed(cmd.toArray(String[]::new));
        if (r.exit() != 0) {
            throw new IllegalStateException("`testbed/bed inventory` failed:\n" + r);
        }
        try {
            Path dir = Files.createTempDirectory("gpuctl-bed-inventory");
            Path file = dir.resolve("inventory.yaml");
            Files.writeString(file, r.out());
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs cmd as root on host over real ssh (the bed's key and known_hosts). */
    public BedResult ssh(String host, String cmd) {
        return ssh(host, cmd, SSH_TIMEOUT);
    }

    public BedResult ssh(String host, String cmd, Duration timeout) {
        address(host);
        return run(List.of(script.toString(), "ssh", host, cmd), timeout, name);
    }

    /** Runs cmd as root on host and returns its stdout; a non-zero exit fails the test, showing the command and its output. */
    public String ok(String host, String cmd) {
        BedResult r = ssh(host, cmd);
        if (r.exit() != 0) throw new AssertionError(host + ": " + cmd + "\n" + r);
        return r.out();
    }

    /** Every host's stdout of cmd, by host: a read-only fingerprint whose equality before and after proves "nothing changed". */
    public Map<String, String> fingerprints(String cmd) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        for (String h : hosts()) m.put(h, ssh(h, cmd).out());
        return m;
    }

    /** Stops host and boots it again (its disk is kept); returns once sshd answers and boot finished. */
    public void reboot(String host) {
        BedResult r = bed("reboot", host);
        if (r.exit() != 0) {
            throw new IllegalStateException("`testbed/bed reboot " + host + "` failed:\n" + r);
        }
    }

    /** Adds message to host's journal as a kernel message of this boot (`testbed/bed kernel-log`): an Xid line, say. */
    public void kernelLog(String host, String message) {
        BedResult r = bed("kernel-log", host, message);
        if (r.exit() != 0) {
            throw new IllegalStateException("`testbed/bed kernel-log " + host + "` failed:\n" + r);
        }
    }

    /** Takes back every message {@link #kernelLog} added to host's journal. */
    public void clearKernelLog(String host) {
        ok(host, "rm -f /var/log/journal/*/system@gpuctl-bed-*.journal /run/log/journal/*/system@gpuctl-bed-*.journal");
    }

    /** Runs testbed/bed with these arguments. */
    public BedResult bed(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(script.toString());
        cmd.addAll(Arrays.asList(args));
        return run(cmd, BED_TIMEOUT, name);
    }

    static BedResult run(List<String> cmd, Duration timeout, String bedName) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().put("GPUCTL_BED", bedName);
            pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            Process p = pb.start();
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor();
                return new BedResult(124, out.join(), err.join() + "\n(timed out after " + timeout + ": " + cmd + ")");
            }
            return new BedResult(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            return new BedResult(127, "", "cannot run " + cmd + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + cmd, e);
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(read failed: " + e.getMessage() + ")";
            }
        }, DRAIN);
    }

    static Map<String, String> parseEnv(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                String v = line.substring(eq + 1).strip();
                if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                    v = v.substring(1, v.length() - 1);
                }
                m.put(line.substring(0, eq).strip(), v);
            }
        }
        return m;
    }

    private static Path findRepoRoot() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path d = p; d != null; d = d.getParent()) {
            if (Files.isExecutable(d.resolve("testbed/bed"))) {
                return d;
            }
        }
        throw new IllegalStateException("cannot find testbed/bed above " + p);
    }
}
