package dev.gpuctl.kube;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A Kubernetes version as gpuctl compares them: "1.35" (a minor: any patch of it), "1.35.1" or "v1.35.1".
 *
 * @param patch -1 for a bare minor
 */
public record KubeVersion(int major, int minor, int patch) implements Comparable<KubeVersion> {
    private static final Pattern FORM = Pattern.compile("v?(\\d{1,3})\\.(\\d{1,3})(?:\\.(\\d{1,4}))?");

    /** "1.35", "1.35.1", "v1.35.1"; a suffix after the patch ("-rc.1", "+build") is not accepted. */
    public static Optional<KubeVersion> parse(String s) {
        if (s == null) return Optional.empty();
        var m = FORM.matcher(s.strip());
        if (!m.matches()) return Optional.empty();
        return Optional.of(new KubeVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
            m.group(3) == null ? -1 : Integer.parseInt(m.group(3))));
    }

    public boolean hasPatch() { return patch >= 0; }

    /** "1.35" */
    public String minorString() { return major + "." + minor; }

    /** The minor's position on one line (1.35 follows 1.34), for skew arithmetic. */
    int minorIndex() { return major * 1000 + minor; }

    /** Minors from that to this: 1.35 vs 1.34 is 1. */
    public int minorsAbove(KubeVersion that) { return minorIndex() - that.minorIndex(); }

    /** Same minor, and the same patch when this one names a patch (a bare minor is met by any of its patches). */
    public boolean metBy(KubeVersion running) {
        return minorsAbove(running) == 0 && (!hasPatch() || patch == running.patch);
    }

    /** Ordered by minor, then patch (a bare minor sorts before its patches). */
    @Override public int compareTo(KubeVersion o) {
        int c = Integer.compare(minorIndex(), o.minorIndex());
        return c != 0 ? c : Integer.compare(patch, o.patch);
    }

    /** "v1.35.1", or "1.35" for a bare minor. */
    @Override public String toString() { return hasPatch() ? "v" + major + "." + minor + "." + patch : minorString(); }
}
