package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class VerifyTextTest {
    static VerifyReport report(int checks) {
        List<VerifyReport.Check> list = java.util.stream.IntStream.range(0, checks)
            .mapToObj(i -> new VerifyReport.Check("swap", "check " + i, true, "", "")).toList();
        return new VerifyReport(List.of(new VerifyReport.HostReport("h1", "10.0.0.1", true, "", list)));
    }

    @Test void theLastLineCountsInTheSingularForOneCheck() {
        String one = VerifyText.render(report(1));
        assertTrue(one.contains("\n1 of 1 check passed"), one);
        String two = VerifyText.render(report(2));
        assertTrue(two.contains("\n2 of 2 checks passed"), two);
    }

    @Test void aWarningIsMarkedWarnWithWhatExpiresAndTheFixAndStillCountsAsPassed() {
        VerifyReport.Check soon = new VerifyReport.Check("certs", "control-plane certificates and CAs not expired", true, "",
            "gpuctl certs renew inv.yaml", "apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 10 days");
        VerifyReport report = new VerifyReport(List.of(new VerifyReport.HostReport("h1", "10.0.0.1", true, "",
            List.of(soon, new VerifyReport.Check("swap", "no swap", true, "", "")))));
        String text = VerifyText.render(report);
        assertTrue(text.contains("WARN\n      soon:  apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 10 days\n"
            + "      fix:   gpuctl certs renew inv.yaml\n"), text);
        assertTrue(text.contains("\n2 of 2 checks passed, 1 with a warning"), text);
        assertTrue(report.ok() && report.warned());
        assertTrue(!VerifyTextTest.report(2).warned());
    }

    @Test void eachNodesLastRepairIsShownAfterItsChecksAndIsNoCheck() {
        var c = new VerifyReport.Check("gpu-health", "no hardware or driver Xid error in the kernel log since boot", true, "", "");
        String text = VerifyText.render(new VerifyReport(List.of(
            new VerifyReport.HostReport("w1", "10.0.0.2", true, "", List.of(c), List.of(),
                new VerifyReport.LastRepair("2026-12-04T10:00:00Z", true, List.of("reset_gpu", "restart_plugin"))),
            new VerifyReport.HostReport("w2", "10.0.0.3", true, "", List.of(c), List.of(), new VerifyReport.LastRepair("2026-12-04T11:00:00Z", false, List.of("reboot"))),
            new VerifyReport.HostReport("w3", "10.0.0.4", true, "", List.of(c)))));
        assertTrue(text.contains("ok\nw1  last repair: 2026-12-04T10:00:00Z proved (reset_gpu, restart_plugin)\nw2 "), text);
        assertTrue(text.contains("\nw2  last repair: 2026-12-04T11:00:00Z NOT proved (the node was left cordoned) (reboot)\n"), text);
        assertTrue(!text.contains("w3  last repair"), text);
        assertTrue(text.contains("\n3 of 3 checks passed"), text);
    }

    @Test void aJobsXidIsAWarningOfWhatHappenedNotOfWhatComesSoon() {
        VerifyReport.Check xid = new VerifyReport.Check("gpu-health", "no hardware or driver Xid error in the kernel log since boot", true, "",
            "the fix named in the problem", "1 application Xid error(s) in the kernel log since boot (a job's fault, not the GPU's):\nXid 13 ...");
        String text = VerifyText.render(new VerifyReport(List.of(new VerifyReport.HostReport("w1", "10.0.0.2", true, "", List.of(xid)))));
        assertTrue(text.contains("WARN\n      warn:  1 application Xid error(s) in the kernel log since boot (a job's fault, not the GPU's):\n"
            + "             Xid 13 ...\n"), text);
        assertTrue(text.contains("\n1 of 1 check passed, 1 with a warning"), text);
    }

    @Test void whatACheckFoundIsShownUnderItPassedOrNot() {
        var quorum = new VerifyReport.Check("control-plane", "etcd quorum: a majority of the members healthy", true, "", "", "",
            "2 of 3 members healthy (quorum 2); leader m1; down: m3 (e304a7a6d9a0c8d3)");
        String text = VerifyText.render(new VerifyReport(List.of(new VerifyReport.HostReport("m1", "10.0.0.11", true, "", List.of(quorum)))));
        assertTrue(text.contains("ok\n      found: 2 of 3 members healthy (quorum 2); leader m1; down: m3 (e304a7a6d9a0c8d3)\n"), text);
        assertTrue(text.contains("\n1 of 1 check passed\n"), text);
        assertTrue(!VerifyText.render(report(1)).contains("found:"), "no detail, no line");
    }
}
