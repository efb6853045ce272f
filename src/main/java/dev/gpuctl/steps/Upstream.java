package dev.gpuctl.steps;

import dev.gpuctl.step.Op;
import dev.gpuctl.step.Sh;
import java.util.List;

/**
 * Where {@code packages: upstream} takes packages from: the projects' official apt repositories and keys.
 * The distribution and codename are read on the host from /etc/os-release when the command runs.
 */
final class Upstream {
    private Upstream() {}

    static final String KEYRINGS = "/etc/apt/keyrings";
    /** Reads the host's $ID and $VERSION_CODENAME (/etc/os-release) and $arch (dpkg), or exits 1. */
    static final String OS_VARS = ". /etc/os-release || exit 1; arch=$(dpkg --print-architecture) || exit 1; ";
    static final String CRI_DOCKERD_VERSION = "0.3.16";

    /** What the repository set-up commands below need: curl, CA certificates, gpg. */
    static Op.Run prerequisites() {
        return Sh.aptInstall("curl, CA certificates and gpg for the upstream repositories",
            List.of("curl", "ca-certificates", "gnupg"));
    }

    /**
     * Docker's apt key and repository. Key and list are fetched and made in a fresh private directory and each
     * installed through a temp file beside it and a rename: an interrupted run leaves either the old file or the
     * whole new one, never a half-written one. The key comes over https from download.docker.com and is what
     * apt checks the repository's signatures with; it is not pinned by checksum (Docker rotates and re-signs it).
     */
    static Op.Run dockerRepo() {
        return Op.Run.of("Docker's apt repository",
                HostWrite.TEMP_DIR + "install -d -m 0755 " + KEYRINGS + " || exit 1; " + OS_VARS
                    + HostWrite.CURL + " -fsSL -o \"$d/docker.asc\" \"https://download.docker.com/linux/$ID/gpg\" || exit 1; "
                    + "printf 'deb [arch=%s signed-by=" + KEYRINGS + "/docker.asc] https://download.docker.com/linux/%s %s stable\\n' "
                    + "\"$arch\" \"$ID\" \"$VERSION_CODENAME\" > \"$d/docker.list\" || exit 1; "
                    + HostWrite.install("\"$d/docker.asc\"", KEYRINGS + "/docker.asc", "0644") + " || exit 1; "
                    + HostWrite.install("\"$d/docker.list\"", "/etc/apt/sources.list.d/docker.list", "0644"))
            .unless("test -s /etc/apt/sources.list.d/docker.list -a -s " + KEYRINGS + "/docker.asc")
            .journalling(Sh.journalWrite(KEYRINGS + "/docker.asc", "/etc/apt/sources.list.d/docker.list"));
    }

    /** The NVIDIA container toolkit's apt key (dearmored) and repository list, made as {@link #dockerRepo} makes Docker's. */
    static Op.Run nvidiaToolkitRepo() {
        return Op.Run.of("NVIDIA container toolkit's apt repository",
                HostWrite.TEMP_DIR + "install -d -m 0755 " + KEYRINGS + " || exit 1; "
                    + HostWrite.CURL + " -fsSL -o \"$d/gpgkey\" https://nvidia.github.io/libnvidia-container/gpgkey || exit 1; "
                    + "gpg --batch --yes --dearmor -o \"$d/key.gpg\" \"$d/gpgkey\" || exit 1; "
                    + HostWrite.CURL + " -fsSL -o \"$d/upstream.list\" https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list || exit 1; "
                    + "sed 's#deb https://#deb [signed-by=" + KEYRINGS + "/nvidia-container-toolkit.gpg] https://#' \"$d/upstream.list\" > \"$d/list\" || exit 1; "
                    + HostWrite.install("\"$d/key.gpg\"", KEYRINGS + "/nvidia-container-toolkit.gpg", "0644") + " || exit 1; "
                    + HostWrite.install("\"$d/list\"", "/etc/apt/sources.list.d/nvidia-container-toolkit.list", "0644"))
            .unless("test -s /etc/apt/sources.list.d/nvidia-container-toolkit.list -a -s " + KEYRINGS + "/nvidia-container-toolkit.gpg")
            .journalling(Sh.journalWrite(KEYRINGS + "/nvidia-container-toolkit.gpg", "/etc/apt/sources.list.d/nvidia-container-toolkit.list"));
    }

    /**
     * cri-dockerd has no apt repository: its release .deb for this distribution, codename and architecture, fetched
     * into a fresh private directory that is removed afterwards. Mirantis publishes no checksums beside the .debs, so
     * none is pinned here; the download is over https from GitHub's release storage.
     */
    static Op.Run criDockerdDeb() {
        String v = CRI_DOCKERD_VERSION;
        return Op.Run.of("cri-dockerd " + v + " from its release .deb",
                HostWrite.TEMP_DIR + OS_VARS
                    + HostWrite.CURL + " -fsSL -o \"$d/cri-dockerd.deb\" "
                    + "\"https://github.com/Mirantis/cri-dockerd/releases/download/v" + v + "/cri-dockerd_" + v + ".3-0.$ID-${VERSION_CODENAME}_$arch.deb\" || exit 1; "
                    + "DEBIAN_FRONTEND=noninteractive apt-get install -y -q \"$d/cri-dockerd.deb\"")
            .unless(Sh.allInstalled(List.of("cri-dockerd")));
    }

    static String kubernetesRepoLine(String minor) {
        return "deb [signed-by=" + KEYRINGS + "/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v" + minor + "/deb/ /\n";
    }

    static Op.Run kubernetesKey(String minor) {
        return Op.Run.of("Kubernetes " + minor + " apt key",
                HostWrite.TEMP_DIR + "install -d -m 0755 " + KEYRINGS + " || exit 1; "
                    + HostWrite.CURL + " -fsSL -o \"$d/Release.key\" https://pkgs.k8s.io/core:/stable:/v" + minor + "/deb/Release.key || exit 1; "
                    + "gpg --batch --yes --dearmor -o \"$d/key.gpg\" \"$d/Release.key\" || exit 1; "
                    + HostWrite.install("\"$d/key.gpg\"", KEYRINGS + "/kubernetes-apt-keyring.gpg", "0644"))
            .unless("test -s " + KEYRINGS + "/kubernetes-apt-keyring.gpg").journalling(Sh.journalWrite(KEYRINGS + "/kubernetes-apt-keyring.gpg"));
    }
}
