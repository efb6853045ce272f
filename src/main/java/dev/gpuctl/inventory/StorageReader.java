package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** Reads `storage:`. See {@link InventoryLoader} for the rules. */
final class StorageReader {
    static final List<String> KEYS = List.of("nfs");
    static final List<String> NFS_KEYS = List.of("server", "exports");
    static final List<String> EXPORT_KEYS = List.of("path", "readOnly", "rootSquash");

    private final Problems problems;

    StorageReader(Problems problems) { this.problems = problems; }

    Optional<Nfs> read(Section storage, List<dev.gpuctl.inventory.Node> nodes) {
        return storage.section("nfs", NFS_KEYS, Map.of()).map(nfs -> nfs(nfs, nodes));
    }

    private Nfs nfs(Section nfs, List<dev.gpuctl.inventory.Node> nodes) {
        Optional<ScalarNode> server = nfs.requiredScalar("server", "the name of the node that serves NFS, or a NAS's address");
        List<String> names = nodes.stream().map(dev.gpuctl.inventory.Node::name).toList();
        // not a node's name: an external server (a NAS), given by its IP address, or by a host name with a dot in it
        // (so that a mistyped node name is not taken for one)
        boolean external = server.filter(s -> !names.contains(s.getValue())).isPresent();
        server.filter(s -> !names.contains(s.getValue()))
            .filter(s -> Names.canonicalAddress(s.getValue()).isEmpty() || (Cidr.parseAddress(s.getValue()).isEmpty()
                && !s.getValue().contains(".")))
            .ifPresent(s -> problems.at(s, nfs.child("server") + ": no node named '" + s.getValue() + "' (expected the name of a node: "
                + String.join(", ", names) + "; or, for a NAS that is not a node, its IP address or fully qualified host name)"));
        if (nfs.value("exports").isEmpty()) nfs.missing("exports", "a list of exports such as { path: /export/dataset }");
        List<NfsExport> exports = nfs.list("exports").map(list -> exports(nfs, list)).orElse(List.of());
        return new Nfs(server.map(ScalarNode::getValue).orElse(""), exports, external);
    }

    private List<NfsExport> exports(Section nfs, SequenceNode list) {
        if (list.getValue().isEmpty()) {
            problems.at(list, nfs.child("exports") + ": the list is empty (expected at least one export)");
        }
        List<NfsExport> exports = new ArrayList<>();
        Map<String, Node> seen = new HashMap<>();
        for (int i = 0; i < list.getValue().size(); i++) {
            String path = nfs.child("exports") + "[" + i + "]";
            Optional<Section> export = Section.read(problems, path, list.getValue().get(i), EXPORT_KEYS, Map.of());
            if (export.isEmpty()) continue;
            Optional<ScalarNode> dir = export.get().requiredScalar("path", "an absolute path such as /export/dataset");
            boolean readOnly = export.get().bool("readOnly").orElse(false);
            boolean rootSquash = export.get().bool("rootSquash").orElse(true);
            dir.filter(d -> exportPath(d, export.get().child("path")))
                .filter(d -> unique(d, seen))
                .ifPresent(d -> exports.add(new NfsExport(d.getValue(), readOnly, rootSquash)));
        }
        return exports;
    }

    private boolean exportPath(ScalarNode dir, String path) {
        Optional<String> problem = NfsExport.pathProblem(dir.getValue());
        problem.ifPresent(why -> problems.at(dir, path + ": '" + dir.getValue() + "' is not usable as an export path: " + why
            + " (expected an absolute path such as /export/dataset, of " + NfsExport.SAFE_CHARACTERS
            + ", without '.' or '..' parts, '//' or a trailing '/')"));
        return problem.isEmpty();
    }

    private boolean unique(ScalarNode dir, Map<String, Node> seen) {
        Node first = seen.putIfAbsent(dir.getValue(), dir);
        if (first != null) {
            problems.at(dir, "duplicate export path '" + dir.getValue() + "' (first at line " + Problems.line(first) + ")");
        }
        return first == null;
    }
}
