package dev.gpuctl.engine;

import dev.gpuctl.steps.CertificatesStep;

/** Renders a verify report as a table: one line per host and check, a mark, and for failures what and how to fix. */
public final class VerifyText {
    private VerifyText() {}

    /** "2026-12-05T01:02:03Z proved (reset_gpu, restart_plugin)"; a repair not proved left the node cordoned. */
    static String lastRepair(VerifyReport.LastRepair r) {
        return r.at() + " " + (r.proved() ? "proved" : "NOT proved (the node was left cordoned)")
            + (r.remedies().isEmpty() ? "" : " (" + String.join(", ", r.remedies()) + ")");
    }

    public static String render(VerifyReport report) {
        int hostW = 4;
        int stepW = 4;
        int checkW = 5;
        for (var h : report.hosts()) {
            hostW = Math.max(hostW, h.name().length());
            for (var c : h.checks()) {
                stepW = Math.max(stepW, c.step().length());
                checkW = Math.max(checkW, Math.min(72, c.check().length()));
            }
        }
        String fmt = "%-" + hostW + "s  %-" + stepW + "s  %-" + checkW + "s  %s%n";
        StringBuilder sb = new StringBuilder(String.format(fmt, "HOST", "STEP", "CHECK", "RESULT"));
        int failed = 0;
        int warned = 0;
        int total = 0;
        for (var h : report.hosts()) {
            if (!h.reachable()) {
                sb.append(String.format(fmt, h.name(), "-", "reachable over SSH", "UNREACHABLE"));
                sb.append("      ").append(h.error().replace("\n", "\n      ")).append('\n');
                continue;
            }
            if (h.lastRepair() != null) {
                var r = h.lastRepair();
                sb.append(String.format(fmt, h.name(), "repair", "last gpuctl repair", r.proved() ? "ok" : "info"));
                sb.append("      last:  ").append(r.at()).append(' ').append(r.proved() ? "proved" : "not proved (left cordoned)")
                    .append(r.remedies().isEmpty() ? "" : " (" + String.join(", ", r.remedies()) + ")").append('\n');
            }
            for (var c : h.checks()) {
                total++;
                String check = c.check().length() > 72 ? c.check().substring(0, 69) + "..." : c.check();
                sb.append(String.format(fmt, h.name(), c.step(), check, c.warned() ? "WARN" : c.ok() ? "ok" : "FAIL"));
                if (!c.detail().isEmpty()) sb.append("      found: ").append(c.detail().replace("\n", "\n             ")).append('\n');
                if (c.warned()) {
                    warned++;
                    // a certificate's warning is about what comes soon; any other (a job's Xid) about what happened
                    sb.append(c.step().equals(CertificatesStep.ID) ? "      soon:  " : "      warn:  ")
                        .append(c.warning().replace("\n", "\n             ")).append('\n');
                    sb.append("      fix:   ").append(c.fix()).append('\n');
                }
                if (!c.ok()) {
                    failed++;
                    sb.append("      wrong: ").append(c.problem().replace("\n", "\n             ")).append('\n');
                    sb.append("      fix:   ").append(c.fix()).append('\n');
                }
            }
            if (h.lastRepair() != null) sb.append(h.name()).append("  last repair: ").append(lastRepair(h.lastRepair())).append('\n');
        }
        sb.append('\n').append(total - failed).append(" of ").append(total).append(total == 1 ? " check passed" : " checks passed");
        if (warned > 0) sb.append(", ").append(warned).append(warned == 1 ? " with a warning" : " with warnings");
        if (!report.unreachable().isEmpty()) {
            sb.append("; unreachable: ").append(String.join(", ", report.unreachable().stream().map(VerifyReport.HostReport::name).toList()));
        }
        sb.append('\n');
        return sb.toString();
    }
}
