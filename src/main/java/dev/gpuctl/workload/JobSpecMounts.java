package dev.gpuctl.workload;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Problems;
import dev.gpuctl.inventory.Section;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/** The job spec's dataset and checkpoint sections, for {@link JobSpecLoader}: an NFS export of the inventory and where it is mounted. */
final class JobSpecMounts {
    static final List<String> MOUNT_KEYS = List.of("export", "mountPath");

    private JobSpecMounts() {}

    /** dataset or checkpoint: an export by path or last part, or { export, mountPath }. */
    static Optional<JobSpec.Mount> mount(Section s, String key, String defaultPath, Problems problems, Inventory inv) {
        Optional<Node> value = s.value(key);
        if (value.isEmpty()) return Optional.empty();
        Optional<ScalarNode> exportNode;
        String mountPath = defaultPath;
        if (value.get() instanceof MappingNode) {
            Optional<Section> m = Section.read(problems, key, value.get(), MOUNT_KEYS,
                Map.of("path", "name the export with export: and its path or name, e.g. export: /export/ckpt"));
            if (m.isEmpty()) return Optional.empty();
            exportNode = m.get().requiredScalar("export", "an export of storage.nfs, by path or name");
            Optional<ScalarNode> path = m.get().scalar("mountPath");
            if (path.isPresent()) {
                Optional<String> why = NfsExport.pathProblem(path.get().getValue());
                if (why.isPresent()) {
                    problems.at(path.get(), key + ".mountPath: '" + path.get().getValue() + "' is not usable: " + why.get()
                        + " (expected an absolute path other than /, of " + NfsExport.SAFE_CHARACTERS
                        + ", without '.' or '..' parts, '//' or a trailing '/')");
                    return Optional.empty();
                }
                mountPath = path.get().getValue();
            }
        } else {
            exportNode = s.scalar(key);
        }
        if (exportNode.isEmpty()) return Optional.empty();
        ScalarNode ref = exportNode.get();
        if (inv.nfs().isEmpty()) {
            problems.at(ref, key + ": the inventory " + inv.file().getFileName() + " has no storage.nfs (add the NFS"
                + " server and its exports there, e.g. storage: { nfs: { server: master, exports: [ { path: /export/dataset } ] } })");
            return Optional.empty();
        }
        Nfs nfs = inv.nfs().get();
        List<NfsExport> found = nfs.exports().stream().filter(e -> e.path().equals(ref.getValue())).toList();
        if (found.isEmpty()) {
            found = nfs.exports().stream().filter(e -> e.path().substring(e.path().lastIndexOf('/') + 1).equals(ref.getValue())).toList();
        }
        List<String> known = nfs.exports().stream().map(NfsExport::path).toList();
        if (found.size() != 1) {
            problems.at(ref, key + ": " + (found.isEmpty() ? "no export '" + ref.getValue() + "'" : "'" + ref.getValue()
                + "' names " + found.size() + " exports, give the path") + " (storage.nfs exports: " + String.join(", ", known) + ")");
            return Optional.empty();
        }
        String server = nfs.address(inv);
        return Optional.of(new JobSpec.Mount(server, found.get(0), mountPath));
    }
}
