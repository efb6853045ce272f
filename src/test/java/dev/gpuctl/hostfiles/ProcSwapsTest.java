package dev.gpuctl.hostfiles;

import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcSwapsTest {

    private static final String HEADER = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

    @Test
    void headerOnlyIsNoSwap() {
        assertEquals(List.of(), ProcSwaps.parse(HEADER));
        assertEquals(List.of(), ProcSwaps.parse(""));
        assertEquals(List.of(), ProcSwaps.parse("Filename Type Size Used Priority"));
    }

    @Test
    void rowsAsTheKernelPrintsThem() {
        String text = HEADER
                + "/swap.img                               file\t\t4194300\t\t1024\t\t-2\n"
                + "/dev/sda2                               partition\t2097148\t\t0\t\t-3\n"
                + "/dev/zram0                              partition\t8388604\t\t0\t\t100\n";
        assertEquals(List.of(
                new ProcSwaps.SwapArea("/swap.img", "file", 4194300, 1024, -2),
                new ProcSwaps.SwapArea("/dev/sda2", "partition", 2097148, 0, -3),
                new ProcSwaps.SwapArea("/dev/zram0", "partition", 8388604, 0, 100)), ProcSwaps.parse(text));
    }

    @Test
    void octalEscapesInFileNamesAreUnescaped() {
        String text = HEADER + "/var/my\\040swap\\134file\\040(deleted) file 1024 0 -2\n";
        assertEquals("/var/my swap\\file (deleted)", ProcSwaps.parse(text).get(0).filename());
    }

    @Test
    void rowWithoutHeaderIsStillRead() {
        assertEquals(1, ProcSwaps.parse("/swapfile file 10 0 -2").size());
    }

    @Test
    void malformedRowsAreErrorsNamingTheLine() {
        HostConfException e = assertThrows(HostConfException.class,
                () -> ProcSwaps.parse(HEADER + "/swapfile file 10 0\n"));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        HostConfException n = assertThrows(HostConfException.class,
                () -> ProcSwaps.parse(HEADER + "/swapfile file ten 0 -2\n"));
        assertTrue(n.getMessage().contains("not a number"), n.getMessage());
    }
}
