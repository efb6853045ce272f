package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** dcgmi diag -j in DCGM's documented shapes (its nvvs JsonOutput: 3.x under "DCGM GPU Diagnostic"; 4.x tests at the top). */
class DcgmDiagTest {
    static final String DCGM3_PASS = "Successfully ran diagnostic for group.\n{\n  \"DCGM GPU Diagnostic\" : {\n    \"test_categories\" : [\n"
        + "      {\n        \"category\" : \"Deployment\",\n        \"tests\" : [\n"
        + "          { \"name\" : \"Denylist\", \"results\" : [ { \"gpu_ids\" : \"0,1\", \"status\" : \"Pass\" } ] },\n"
        + "          { \"name\" : \"NVML Library\", \"results\" : [ { \"gpu_ids\" : \"0,1\", \"status\" : \"Pass\" } ] },\n"
        + "          { \"name\" : \"Persistence Mode\", \"results\" : [ { \"gpu_ids\" : \"0,1\", \"status\" : \"Skip\", \"info\" : [ \"Persistence mode is off\" ] } ] }\n"
        + "        ]\n      }\n    ],\n    \"version\" : \"3.3.9\"\n  }\n}\n";

    static final String DCGM3_FAIL = DCGM3_PASS.replace("{ \"name\" : \"NVML Library\", \"results\" : [ { \"gpu_ids\" : \"0,1\", \"status\" : \"Pass\" } ] }",
        "{ \"name\" : \"Graphics Processes\", \"results\" : [ { \"gpu_id\" : \"1\", \"status\" : \"Fail\", \"warnings\" : [ { \"warning\" : "
            + "\"Found 1 graphics processes on GPU 1.\", \"error_id\" : 21 } ] } ] }");

    static final String DCGM4_FAIL = "{\n  \"version\" : \"4.2.3\",\n  \"tests\" : [\n"
        + "    {\"name\":\"software\",\"results\":[{\"entity_group\":\"GPU\",\"entity_id\":0,\"status\":\"pass\"}]},\n"
        + "    {\"name\":\"pcie\",\"results\":[{\"entity_group\":\"GPU\",\"entity_id\":0,\"status\":\"fail\",\"warnings\":[\"GPU 0 is running at PCI link width 8X, which is below the minimum allowed link width of 16X\"]}]}\n"
        + "  ]\n}\n";

    @Test void aPassingRunHasNoProblem_aSkipIsNoFailure() {
        DcgmDiag.Report r = DcgmDiag.parse(DCGM3_PASS);
        assertEquals("3.3.9", r.version());
        assertEquals(List.of("pass", "pass", "skip"), r.results().stream().map(DcgmDiag.Result::status).toList());
        assertEquals("Deployment", r.results().get(0).category());
        assertEquals(Optional.empty(), DcgmDiag.problem(DCGM3_PASS));
        assertEquals("dcgmi diag -r 1 (DCGM 3.3.9): 3 result(s), 0 failed, 0 warning(s)", DcgmDiag.summary(DCGM3_PASS));
    }

    @Test void aFailedTestIsNamedWithItsGpuAndWarning() {
        assertEquals(Optional.of("dcgmi diag -r 1 failed 1 test(s): Graphics Processes on GPU 1: Found 1 graphics processes on GPU 1."),
            DcgmDiag.problem(DCGM3_FAIL));
        assertEquals(Optional.of("dcgmi diag -r 1 failed 1 test(s): pcie on GPU 0: GPU 0 is running at PCI link width 8X, which is below"
            + " the minimum allowed link width of 16X"), DcgmDiag.problem(DCGM4_FAIL));
    }

    @Test void noDcgmiIsSkippedNotFailed() {
        assertEquals(Optional.empty(), DcgmDiag.problem(DcgmDiag.NOT_INSTALLED + "\n"));
        assertTrue(DcgmDiag.summary(DcgmDiag.NOT_INSTALLED).contains("skipped"));
        assertTrue(DcgmDiag.COMMAND.startsWith("if command -v dcgmi"), DcgmDiag.COMMAND);
    }

    @Test void dcgmisOwnErrorIsAProblem_notAPass() {
        String noEngine = "Error: unable to establish a connection to the specified host: localhost\nError: Unable to connect to host engine. Host engine connection invalid/disconnected.\n";
        assertTrue(DcgmDiag.problem(noEngine).orElseThrow().startsWith("no JSON in dcgmi's answer: Error: unable to establish"), DcgmDiag.problem(noEngine).toString());
        assertThrows(IllegalArgumentException.class, () -> DcgmDiag.parse("{\"DCGM GPU Diagnostic\": {\"test_categories\": []}}"));
        assertThrows(IllegalArgumentException.class, () -> DcgmDiag.parse("{ not json"));
    }
}
