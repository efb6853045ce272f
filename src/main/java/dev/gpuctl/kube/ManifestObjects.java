package dev.gpuctl.kube;

import dev.gpuctl.text.HostConfException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * A user's manifest file read as Kubernetes objects ({@link #text}, {@link #objects}): strict UTF-8 YAML whose documents
 * are objects, never a kubeconfig, a private key or cloud credentials, since gpuctl uploads it to the master and applies
 * it as cluster admin. Pure: bytes and text in, objects out or a {@link HostConfException} naming the line.
 */
public final class ManifestObjects {
    private ManifestObjects() {}

    /**
     * A manifest file's text: at most {@link Manifests#MAX_BYTES}, strict UTF-8 (a BOM dropped), YAML that composes (every
     * document; nothing is constructed).
     *
     * @param what names the file in messages ("manifest /path/to/kube-flannel.yml")
     * @throws HostConfException saying which of these it is not, and where for YAML
     */
    public static String text(byte[] bytes, String what) {
        if (bytes.length > Manifests.MAX_BYTES) {
            throw new HostConfException(what + " is " + bytes.length + " bytes (gpuctl reads at most 16 MiB)");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new HostConfException(what + " is not UTF-8 text (expected a YAML manifest)");
        }
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        if (Manifests.compose(text, what).isEmpty()) throw new HostConfException(what + " has no YAML document (expected a manifest)");
        return text;
    }

    /**
     * One Kubernetes object of a manifest, as the plan shows it.
     *
     * @param namespace empty when the object names none (cluster-scoped, or the default namespace)
     * @param name      {@code metadata.name}, or {@code metadata.generateName} followed by '*', or "?" when neither
     * @param line      the line of the manifest its document (or List item) starts on, from 1
     */
    public record KubeObject(String apiVersion, String kind, String namespace, String name, int line) {
        /** KIND/NAMESPACE/NAME, or KIND/NAME without a namespace. */
        public String label() { return kind + "/" + (namespace.isEmpty() ? "" : namespace + "/") + name; }
    }

    /** A private key in PEM (RSA, EC, OpenSSH, PKCS#8, encrypted or not), as text. */
    private static final Pattern PEM_PRIVATE_KEY = Pattern.compile("-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----");

    /**
     * Keys whose values are credentials: AWS's shared credentials file and environment, a kubeconfig's client key, a
     * GCP service account key's {@code private_key}; as a YAML or JSON key, an INI or env assignment. Names a Kubernetes
     * object's own fields never take (they are camelCase), so that an upstream manifest's schemas never match.
     */
    private static final Pattern CREDENTIAL_KEY = Pattern.compile(
        "(?i)(?<![\\w-])[\"']?(aws_secret_access_key|aws_session_token|client-key-data|private_key)[\"']?[ \\t]*[:=]");

    /** Base64 text long enough to hide a key or a credentials file (Secret data, client-key-data). */
    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/\\s]{20,}={0,2}\\s*");

    /**
     * The objects of a manifest, in order, after refusing what must never be applied to a cluster as admin or
     * uploaded to its master: a document that is not a Kubernetes object (not a mapping, no {@code apiVersion} or
     * {@code kind}), a kubeconfig ({@code kind: Config}, or {@code clusters} and {@code users}), and anything that holds
     * a private key or cloud credentials (see {@link #CREDENTIAL_KEY}), as text or base64-encoded in a value (a
     * Secret's {@code data}). A {@code kind: List}'s items are its objects.
     *
     * @param what names the file in messages ("manifest /path/to/kube-flannel.yml")
     * @throws HostConfException naming the line (and column) of the manifest and what is wrong there
     */
    public static List<KubeObject> objects(String text, String what) {
        List<KubeObject> out = new ArrayList<>();
        int n = 0;
        for (Node doc : Manifests.compose(text, what)) {
            n++;
            String where = what + ", document " + n + " (line " + line(doc) + ")";
            object(doc, where, out);
            if ("List".equals(Manifests.scalar(doc, "kind").orElse(null))) {
                Optional<Node> items = Manifests.child(doc, "items");
                if (items.isEmpty() || !(items.get() instanceof SequenceNode seq)) {
                    throw new HostConfException(where + ": kind: List without an items list (expected items: [ ...objects ])");
                }
                out.remove(out.size() - 1);
                for (Node item : seq.getValue()) object(item, what + ", item at line " + line(item), out);
            }
            encodedCredentials(doc, what);
        }
        credentials(text, 0, what, "");
        if (out.isEmpty()) throw new HostConfException(what + " holds no Kubernetes object (expected documents with apiVersion and kind)");
        return out;
    }

    private static void object(Node doc, String where, List<KubeObject> out) {
        if (!(doc instanceof MappingNode)) {
            throw new HostConfException(where + " is not a Kubernetes object (expected a mapping with apiVersion and kind, got "
                + (doc instanceof SequenceNode ? "a list" : "a scalar") + ")");
        }
        if (Manifests.child(doc, "clusters").isPresent() && Manifests.child(doc, "users").isPresent()
            || "Config".equals(Manifests.scalar(doc, "kind").orElse(null))) {
            throw new HostConfException(where + " is a kubeconfig (kind: Config: a cluster's address and someone's credentials),"
                + " not a manifest: gpuctl would upload it to the master and apply it as cluster admin (expected the manifest's"
                + " own file, e.g. the device plugin's DaemonSet)");
        }
        String apiVersion = Manifests.scalar(doc, "apiVersion").filter(v -> !v.isBlank()).orElseThrow(() -> new HostConfException(
            where + " has no apiVersion (expected a Kubernetes object: apiVersion, kind, metadata)"));
        String kind = Manifests.scalar(doc, "kind").filter(v -> !v.isBlank()).orElseThrow(() -> new HostConfException(
            where + " has no kind (expected a Kubernetes object: apiVersion, kind, metadata)"));
        Optional<Node> meta = Manifests.child(doc, "metadata");
        String namespace = meta.flatMap(m -> Manifests.scalar(m, "namespace")).orElse("");
        String name = meta.flatMap(m -> Manifests.scalar(m, "name")).filter(v -> !v.isBlank())
            .or(() -> meta.flatMap(m -> Manifests.scalar(m, "generateName")).map(g -> g + "*")).orElse("?");
        out.add(new KubeObject(apiVersion, kind, namespace, name, line(doc)));
    }

    /**
     * Refuses a private key or a credential key in {@code text}: the manifest's own text ({@code valueLine} 0: the
     * match's line and column are named), or a value decoded from base64 at line {@code valueLine} of the manifest.
     */
    private static void credentials(String text, int valueLine, String what, String how) {
        for (Pattern p : List.of(PEM_PRIVATE_KEY, CREDENTIAL_KEY)) {
            Matcher m = p.matcher(text);
            if (!m.find()) continue;
            int lineStart = text.lastIndexOf('\n', m.start()) + 1;
            int lineNo = valueLine > 0 ? valueLine : 1 + (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            String found = p == PEM_PRIVATE_KEY ? "a private key (" + m.group() + ")" : "credentials (" + m.group(1) + ")";
            throw new HostConfException(what + " line " + lineNo + (valueLine == 0 ? ", column " + (m.start() - lineStart + 1) : "")
                + ": holds " + found + how + ": gpuctl refuses to upload secrets to the master as a manifest (expected"
                + " Kubernetes objects without keys; give the cluster its secrets another way, e.g. kubectl create secret)");
        }
    }

    /** Refuses base64 values (a Secret's data, client-key-data) that decode to a private key or credentials. */
    private static void encodedCredentials(Node node, String what) {
        if (node instanceof MappingNode map) {
            for (NodeTuple t : map.getValue()) encodedCredentials(t.getValueNode(), what);
        } else if (node instanceof SequenceNode seq) {
            for (Node n : seq.getValue()) encodedCredentials(n, what);
        } else if (node instanceof ScalarNode sc && BASE64.matcher(sc.getValue()).matches()) {
            byte[] decoded;
            try {
                decoded = java.util.Base64.getMimeDecoder().decode(sc.getValue().strip());
            } catch (IllegalArgumentException e) {
                return;
            }
            credentials(new String(decoded, StandardCharsets.ISO_8859_1), line(node), what,
                " (base64-encoded in the value there)");
        }
    }

    private static int line(Node node) { return node.getStartMark().getLine() + 1; }
}
