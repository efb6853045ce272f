package dev.gpuctl.steps;

/**
 * Where {@code packages: upstream} takes packages from: the projects' official apt repositories and keys.
 * The distribution and codename are read on the host from /etc/os-release when the command runs.
 */
final class Upstream {
    private Upstream() {}

    static final String KEYRINGS = "/etc/apt/keyrings";
    static final String OS = ". /etc/os-release && ";
    static final String CRI_DOCKERD_VERSION = "0.3.16";

    /** What the repository set-up commands below need: curl, CA certificates, gpg. */
    static Op.Run prerequisites() {
        return Sh.aptInstall("curl, CA certificates and gpg for the upstream repositories",
            java.util.List.of("curl", "ca-certificates", "gnupg"));
    }

    static Op.Run dockerRepo() {
        return Op.Run.of("Docker's apt repository",
                "install -d -m 0755 " + KEYRINGS + " && " + OS
                    + "curl -fsSL \"https://download.docker.com/linux/$ID/gpg\" -o " + KEYRINGS + "/docker.asc && chmod a+r " + KEYRINGS + "/docker.asc && "
                    + "echo \"deb [arch=$(dpkg --print-architecture) signed-by=" + KEYRINGS + "/docker.asc] https://download.docker.com/linux/$ID $VERSION_CODENAME stable\" > /etc/apt/sources.list.d/docker.list")
            .unless("test -s /etc/apt/sources.list.d/docker.list -a -s " + KEYRINGS + "/docker.asc");
    }

    static Op.Run nvidiaToolkitRepo() {
        return Op.Run.of("NVIDIA container toolkit's apt repository",
                "install -d -m 0755 " + KEYRINGS + " && "
                    + "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | gpg --batch --yes --dearmor -o " + KEYRINGS + "/nvidia-container-toolkit.gpg && "
                    + "curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list "
                    + "| sed 's#deb https://#deb [signed-by=" + KEYRINGS + "/nvidia-container-toolkit.gpg] https://#' > /etc/apt/sources.list.d/nvidia-container-toolkit.list")
            .unless("test -s /etc/apt/sources.list.d/nvidia-container-toolkit.list -a -s " + KEYRINGS + "/nvidia-container-toolkit.gpg");
    }

    /** cri-dockerd has no apt repository: its release .deb for this distribution and codename. */
    static Op.Run criDockerdDeb() {
        String v = CRI_DOCKERD_VERSION;
        return Op.Run.of("cri-dockerd " + v + " from its release .deb",
                OS + "f=\"/tmp/cri-dockerd_" + v + ".deb\" && curl -fsSL -o \"$f\" "
                    + "\"https://github.com/Mirantis/cri-dockerd/releases/download/v" + v + "/cri-dockerd_" + v + ".3-0.$ID-${VERSION_CODENAME}_$(dpkg --print-architecture).deb\" "
                    + "&& DEBIAN_FRONTEND=noninteractive apt-get install -y -q \"$f\"; rc=$?; rm -f \"$f\"; exit $rc")
            .unless(Sh.allInstalled(java.util.List.of("cri-dockerd")));
    }

    static String kubernetesRepoLine(String minor) {
        return "deb [signed-by=" + KEYRINGS + "/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v" + minor + "/deb/ /\n";
    }

    static Op.Run kubernetesKey(String minor) {
        return Op.Run.of("Kubernetes " + minor + " apt key",
                "install -d -m 0755 " + KEYRINGS + " && curl -fsSL https://pkgs.k8s.io/core:/stable:/v" + minor
                    + "/deb/Release.key | gpg --batch --yes --dearmor -o " + KEYRINGS + "/kubernetes-apt-keyring.gpg")
            .unless("test -s " + KEYRINGS + "/kubernetes-apt-keyring.gpg");
    }
}
