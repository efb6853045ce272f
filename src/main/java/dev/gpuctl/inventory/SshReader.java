package dev.gpuctl.inventory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads `ssh:` blocks: the inventory's defaults and each node's overrides, key by key (a node's
 * `bastion:` replaces the default bastion as a whole). hostKey is only allowed per node.
 */
final class SshReader {
    static final List<String> KEYS = List.of("user", "port", "identityFile", "knownHosts", "bastion", "connectTimeout");
    static final List<String> NODE_KEYS = List.of("user", "port", "identityFile", "knownHosts", "bastion", "hostKey",
        "connectTimeout");
    static final List<String> BASTION_KEYS = List.of("address", "user", "port");
    static final Map<String, String> DEFAULTS_HINTS = Map.of("hostKey",
        "hostKey is only allowed in a node's own ssh: block, as it pins one host's key");

    /** What one `ssh:` block sets; empty where it sets nothing. */
    record Partial(Optional<String> user, Optional<Integer> port, Optional<Path> identityFile,
                   Optional<Path> knownHosts, Optional<BastionPartial> bastion, Optional<String> hostKey,
                   boolean keyFromSshConfig, Optional<Duration> connectTimeout) {
        static final Partial NONE = new Partial(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty(), false, Optional.empty());

        /** This block's settings, and the defaults' where this one sets nothing. */
        Partial over(Partial defaults) {
            return new Partial(user.or(defaults::user), port.or(defaults::port),
                identityFile.or(defaults::identityFile), knownHosts.or(defaults::knownHosts),
                bastion.or(defaults::bastion), hostKey, false, connectTimeout.or(defaults::connectTimeout));
        }
    }

    /**
     * What ~/.ssh/config says for a host, where the inventory (this block over the defaults) says nothing: User,
     * Port, IdentityFile, and ProxyJump's first hop as the bastion (itself looked up in the configuration).
     */
    Partial withConfig(Partial p, SshConfig.Host h) {
        Optional<BastionPartial> jump = p.bastion().isPresent() ? p.bastion() : h.proxyJump().flatMap(SshConfig.Jump::parse).map(j -> {
            SshConfig.Host jh = ctx.sshConfig.lookup(j.host());
            return new BastionPartial(jh.hostName().orElse(j.host()), j.user().or(jh::user), j.port().or(jh::port));
        });
        Optional<Path> configKey = h.identityFile().flatMap(ctx::sshConfigPath);
        return new Partial(p.user().or(h::user), p.port().or(h::port),
            p.identityFile().or(() -> configKey), p.knownHosts(), jump, p.hostKey(),
            p.identityFile().isEmpty() && configKey.isPresent(), p.connectTimeout());
    }

    /** A bastion as written: its user and port default to the node's user and 22. */
    record BastionPartial(String address, Optional<String> user, Optional<Integer> port) {}

    private final ReadContext ctx;

    SshReader(ReadContext ctx) { this.ctx = ctx; }

    Partial read(Section s) {
        Optional<String> user = user(s, "user");
        Optional<Integer> port = s.port("port");
        Optional<Path> identityFile = s.scalar("identityFile").flatMap(n -> ctx.path(n, s.child("identityFile")));
        Optional<Path> knownHosts = s.scalar("knownHosts").flatMap(n -> ctx.path(n, s.child("knownHosts")));
        Optional<BastionPartial> bastion = s.section("bastion", BASTION_KEYS, Map.of()).flatMap(this::bastion);
        Optional<String> hostKey = s.scalar("hostKey").map(ScalarNode::getValue);
        s.scalar("hostKey").filter(n -> !Names.isHostKeyFingerprint(n.getValue())).ifPresent(n ->
            ctx.problems.at(n, s.child("hostKey") + ": '" + n.getValue() + "' is not a SHA-256 host key fingerprint"
                + " (expected \"SHA256:\" and 43 base64 characters, as `ssh-keygen -lf` prints it)"));
        Optional<Duration> connectTimeout = s.scalar("connectTimeout").flatMap(n -> {
            try {
                return Optional.of(SshSettings.parseConnectTimeout(n.getValue()));
            } catch (IllegalArgumentException e) {
                ctx.problems.at(n, s.child("connectTimeout") + ": " + e.getMessage());
                return Optional.empty();
            }
        });
        return new Partial(user, port, identityFile, knownHosts, bastion, hostKey, false, connectTimeout);
    }

    private Optional<BastionPartial> bastion(Section b) {
        Optional<ScalarNode> address = b.requiredScalar("address", "the bastion's IP address or host name");
        Optional<String> canonical = address.flatMap(n -> {
            Optional<String> a = Names.canonicalAddress(n.getValue());
            if (a.isEmpty()) ctx.problems.at(n, b.child("address") + ": " + badAddress(n.getValue()));
            return a.map(ok -> n.getValue());
        });
        Optional<String> user = user(b, "user");
        Optional<Integer> port = b.port("port");
        return canonical.map(a -> new BastionPartial(a, user, port));
    }

    private Optional<String> user(Section s, String key) {
        return s.scalar(key).filter(n -> {
            boolean ok = Names.isUserName(n.getValue());
            if (!ok) ctx.problems.at(n, s.child(key) + ": '" + n.getValue() + "' is not a valid user name"
                + " (expected at most 32 letters, digits, '_', '.' and '-', not starting with '-' or '.')");
            return ok;
        }).map(ScalarNode::getValue);
    }

    static String badAddress(String text) {
        return "'" + text + "' is not a valid address (expected an IPv4 or IPv6 address, or a host name per RFC 1123)";
    }

    /** The settings for one node: its own block over the defaults, then the built-in defaults. */
    SshSettings resolve(Partial partial) {
        String user = partial.user().orElse("root");
        return new SshSettings(user, partial.port().orElse(22),
            partial.identityFile().orElseGet(() -> ctx.underHome(".ssh/id_ed25519", "ssh.identityFile")),
            partial.knownHosts().orElseGet(() -> ctx.underHome(".ssh/known_hosts", "ssh.knownHosts")),
            partial.bastion().map(b -> new Bastion(b.address(), b.user().orElse(user), b.port().orElse(22))),
            partial.hostKey(), partial.identityFile().isEmpty() ? SshSettings.KeyOrigin.DEFAULT
                : partial.keyFromSshConfig() ? SshSettings.KeyOrigin.SSH_CONFIG : SshSettings.KeyOrigin.INVENTORY,
            partial.connectTimeout().orElse(SshSettings.DEFAULT_CONNECT_TIMEOUT));
    }
}
