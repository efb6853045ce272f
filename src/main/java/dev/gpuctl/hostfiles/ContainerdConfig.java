package dev.gpuctl.hostfiles;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sets {@code SystemdCgroup = true} for the runc runtime in containerd's /etc/containerd/config.toml.
 *
 * <p>Two layouts are known, chosen by the file's top-level {@code version}:
 * <ul>
 *   <li>{@code version = 2} (containerd 1.x):
 *       {@code [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]}</li>
 *   <li>{@code version = 3} (containerd 2.x):
 *       {@code [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]}</li>
 * </ul>
 * In that table a {@code SystemdCgroup = false} becomes {@code true} (indentation and a trailing
 * comment kept), a missing key is added as the table's first key, and a missing table is appended
 * at the end of the file. Nothing else changes; a file that is already right comes back identical.
 *
 * <p>This is a line-oriented edit, not a TOML parser. Its limits, each refused with a
 * {@link HostConfException} rather than guessed at:
 * <ul>
 *   <li>no {@code version} line (a version 1 file, or docker's containerd.io package file that only
 *       says {@code disabled_plugins = ["cri"]}): write {@code containerd config default} first;</li>
 *   <li>another version than 2 or 3;</li>
 *   <li>the runc options given some other way than as their own table ({@code options = { ... }}
 *       inline, or dotted keys such as {@code options.SystemdCgroup} in the runc table or a table
 *       above it). {@code SystemdCgroup} in another runtime's table (nvidia-ctk copies runc's
 *       options to {@code runtimes.nvidia.options}) is that runtime's business and is left alone.
 *       A whole {@code runc = { ... }} inline table in a parent table is not detected.</li>
 * </ul>
 * Table headers are compared with blanks removed and either quote style, so
 * {@code [ plugins."io.containerd.cri.v1.runtime" . containerd ...]} is recognised too. A header-like
 * line inside a multi-line string would be misread; containerd's own files have none.
 */
public final class ContainerdConfig {

    /** The runc options table in a version 2 file. */
    public static final String V2_TABLE = "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options";
    /** The runc options table in a version 3 file. */
    public static final String V3_TABLE = "plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options";

    private static final Pattern VERSION = Pattern.compile("^\\s*version\\s*=\\s*(\\d+)\\s*(#.*)?$");
    private static final Pattern HEADER = Pattern.compile("^\\s*\\[([^\\[\\]].*)]\\s*(#.*)?$");
    private static final Pattern ARRAY_HEADER = Pattern.compile("^\\s*\\[\\[.*]]\\s*(#.*)?$");
    private static final Pattern SYSTEMD_CGROUP =
            Pattern.compile("^(\\s*SystemdCgroup\\s*=\\s*)(true|false)(\\s*(#.*)?)$");
    private static final Pattern KEY_LINE = Pattern.compile("^(\\s*)[A-Za-z0-9_\"'-]");
    private static final Pattern OPTIONS_KEY = Pattern.compile("^\\s*options\\s*[.=]");

    private static final String HINT = "edit /etc/containerd/config.toml by hand or replace it with "
            + "`containerd config default` output, then run gpuctl again";

    private ContainerdConfig() {
    }

    /**
     * Returns config.toml with {@code SystemdCgroup = true} in the runc options table of its version.
     *
     * @throws HostConfException for a layout this edit does not handle (see the class comment)
     */
    public static String ensureSystemdCgroup(String configToml) {
        List<String> lines = new ArrayList<>(List.of(configToml.split("\n", -1)));
        int version = version(lines);
        String wanted = normalise(version == 2 ? V2_TABLE : V3_TABLE);
        String runcTable = wanted.substring(0, wanted.length() - ".options".length());

        int start = -1;
        int end = lines.size();
        String current = "";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String header = header(line);
            if (header != null) {
                if (start >= 0 && end == lines.size()) end = i;
                current = header;
                if (header.equals(wanted)) {
                    if (start >= 0) {
                        throw new HostConfException("config.toml defines [" + wanted + "] twice (line "
                                + (start + 1) + " and " + (i + 1) + "); " + HINT);
                    }
                    start = i;
                }
                continue;
            }
            if (isComment(line)) continue;
            boolean inTarget = start >= 0 && end == lines.size() && current.equals(wanted);
            // From the runc table or one above it, a dotted key could reach the runc options;
            // SystemdCgroup in another runtime's table (nvidia-ctk copies it there) is that runtime's.
            boolean aboveTarget = current.isEmpty() || wanted.startsWith(current + ".");
            if (!inTarget && aboveTarget && line.contains("SystemdCgroup")) {
                throw new HostConfException("config.toml sets SystemdCgroup at line " + (i + 1)
                        + " outside [" + wanted + "], a layout gpuctl does not edit; " + HINT);
            }
            if (current.equals(runcTable) && OPTIONS_KEY.matcher(line).find()) {
                throw new HostConfException("config.toml gives the runc options inline at line " + (i + 1)
                        + " (in [" + runcTable + "]), a layout gpuctl does not edit; " + HINT);
            }
        }

        if (start < 0) {
            StringBuilder out = new StringBuilder(configToml);
            if (!configToml.isEmpty() && !configToml.endsWith("\n")) out.append('\n');
            if (!configToml.isEmpty() && !configToml.endsWith("\n\n")) out.append('\n');
            out.append('[').append(version == 2 ? V2_TABLE : V3_TABLE).append("]\n");
            out.append("  SystemdCgroup = true\n");
            return out.toString();
        }
        for (int i = start + 1; i < end; i++) {
            Matcher m = SYSTEMD_CGROUP.matcher(lines.get(i));
            if (m.matches()) {
                if (m.group(2).equals("true")) return configToml;
                lines.set(i, m.group(1) + "true" + m.group(3));
                return String.join("\n", lines);
            }
            if (!isComment(lines.get(i)) && lines.get(i).contains("SystemdCgroup")) {
                throw new HostConfException("config.toml line " + (i + 1) + " sets SystemdCgroup to something "
                        + "other than true or false: " + lines.get(i).strip() + "; " + HINT);
            }
        }
        lines.add(start + 1, indentOfFirstKey(lines, start, end) + "SystemdCgroup = true");
        return String.join("\n", lines);
    }

    /** True when the runc options table of the file's version says {@code SystemdCgroup = true}. */
    public static boolean hasSystemdCgroup(String configToml) {
        try {
            return ensureSystemdCgroup(configToml).equals(configToml);
        } catch (HostConfException e) {
            return false;
        }
    }

    private static int version(List<String> lines) {
        for (String line : lines) {
            if (header(line) != null || ARRAY_HEADER.matcher(line).matches()) break;
            Matcher m = VERSION.matcher(line);
            if (m.matches()) {
                int v = Integer.parseInt(m.group(1));
                if (v == 2 || v == 3) return v;
                throw new HostConfException("config.toml says version = " + v
                        + "; gpuctl edits versions 2 (containerd 1.x) and 3 (containerd 2.x); " + HINT);
            }
        }
        throw new HostConfException("config.toml has no top-level `version = 2` or `version = 3` line "
                + "(a version 1 file, or one that only disables plugins); " + HINT);
    }

    /** The table name of a {@code [table]} header line with blanks removed and ' as ", or null. */
    private static String header(String line) {
        if (ARRAY_HEADER.matcher(line).matches()) return "[[array]]";
        Matcher m = HEADER.matcher(line);
        return m.matches() ? normalise(m.group(1)) : null;
    }

    private static String normalise(String tableName) {
        return tableName.replace('\'', '"').replaceAll("\\s+", "");
    }

    private static boolean isComment(String line) {
        String s = line.strip();
        return s.isEmpty() || s.startsWith("#");
    }

    private static String indentOfFirstKey(List<String> lines, int start, int end) {
        for (int i = start + 1; i < end; i++) {
            Matcher m = KEY_LINE.matcher(lines.get(i));
            if (!isComment(lines.get(i)) && m.find()) return m.group(1);
        }
        Matcher h = Pattern.compile("^(\\s*)").matcher(lines.get(start));
        return (h.find() ? h.group(1) : "") + "  ";
    }
}
