package dev.gpuctl.kube;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * kube-apiserver's image as its static-pod manifest names it, read from the manifest's image lines (the text a probe
 * learns: the manifest's lines after "image:"). Pure.
 *
 * @param tag "v1.34.2" from "registry.k8s.io/kube-apiserver:v1.34.2" (a digest after it dropped); empty when no line
 *            names kube-apiserver
 */
public record ApiServerImage(Optional<String> tag) {
    private static final Pattern TAG = Pattern.compile("kube-apiserver:(v\\d+\\.\\d+\\.\\d+[^@\\s\"']*)");

    public static ApiServerImage parse(String imageLines) {
        var m = TAG.matcher(imageLines);
        return new ApiServerImage(m.find() ? Optional.of(m.group(1)) : Optional.empty());
    }

    /** The tag as a version; empty when there is none or it is not one gpuctl compares ("v1.35.0-rc.1"). */
    public Optional<KubeVersion> version() { return tag.flatMap(KubeVersion::parse); }
}
