package dev.gpuctl.hostfiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FstabTest {

    private static final String M = Fstab.MARKER;

    private static final String UBUNTU = """
            # /etc/fstab: static file system information.
            #
            # <file system> <mount point>   <type>  <options>       <dump>  <pass>
            /dev/disk/by-uuid/3f1c2e0a-1111-2222-3333-444455556666 / ext4 defaults 0 1
            /dev/disk/by-uuid/ABCD-1234 /boot/efi vfat defaults 0 1
            /swap.img\tnone\tswap\tsw\t0\t0
            """;

    @Test
    void ubuntuTabSeparatedSwapImageIsCommentedOut() {
        String out = Fstab.commentOutSwap(UBUNTU);
        assertEquals(UBUNTU.replace("/swap.img\tnone", M + "/swap.img\tnone"), out);
        assertTrue(out.contains("\n" + M + "/swap.img\tnone\tswap\tsw\t0\t0\n"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "/swap.img\tnone\tswap\tsw\t0\t0",
            "/swapfile none swap sw 0 0",
            "/swapfile    none     swap    defaults    0 0",
            "/dev/sda2 none swap sw 0 0",
            "UUID=8d3b7e0c-4a1f-4c5e-9a40-123456789abc none swap sw 0 0",
            "LABEL=swap none swap sw,pri=5 0 0",
            "PARTUUID=0000-01\tnone swap\tdefaults",
            "  /dev/mapper/vg-swap \t none \t swap \t sw \t 0 \t 0",
            "/dev/zram0 none swap defaults,pri=100",
            "/swapfile swap swap defaults 0 0",
            "/swapfile none swap noauto 0 0",
    })
    void everyFormOfSwapEntryIsFound(String line) {
        String fstab = "proc /proc proc defaults 0 0\n" + line + "\n";
        assertEquals(List.of(line), Fstab.activeSwapEntries(fstab));
        assertEquals("proc /proc proc defaults 0 0\n" + M + line + "\n", Fstab.commentOutSwap(fstab));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "/dev/sdb1 /swap ext4 defaults 0 2",
            "/dev/sdb2\t/mnt/swap\text4\tdefaults\t0\t2",
            "swap /swap tmpfs defaults 0 0",
            "#/swapfile none swap sw 0 0",
            "# /swap.img\tnone\tswap\tsw\t0\t0",
            "   # UUID=abc none swap sw 0 0",
            "nfs:/export/swap /data nfs ro 0 0",
            "/dev/sdc1 /data xfs defaults,swap 0 0",
            "/swapfile none",
            "",
            "   ",
            "\t",
    })
    void nonSwapLinesAreUntouched(String line) {
        String fstab = line + "\n";
        assertEquals(List.of(), Fstab.activeSwapEntries(fstab));
        assertEquals(fstab, Fstab.commentOutSwap(fstab));
    }

    @Test
    void originalLineTextIsKeptAfterTheMarker() {
        String line = "  UUID=8d3b  none\t swap   sw,pri=10   0  0";
        String out = Fstab.commentOutSwap(line + "\n");
        assertEquals(M + line + "\n", out);
        assertTrue(out.startsWith("#"), "a commented line must be a comment to mount and swapon");
        assertTrue(Fstab.isDisabledByGpuctl(out.substring(0, out.length() - 1)));
    }

    @Test
    void trailingNewlineStateIsKept() {
        assertEquals(M + "/swapfile none swap sw 0 0", Fstab.commentOutSwap("/swapfile none swap sw 0 0"));
        assertEquals(M + "/swapfile none swap sw 0 0\n", Fstab.commentOutSwap("/swapfile none swap sw 0 0\n"));
        assertEquals(M + "/swapfile none swap sw 0 0\n\n\n", Fstab.commentOutSwap("/swapfile none swap sw 0 0\n\n\n"));
        assertEquals("", Fstab.commentOutSwap(""));
        assertEquals("\n", Fstab.commentOutSwap("\n"));
    }

    @Test
    void everythingElseIsByteIdenticalIncludingCrlfAndBlankLines() {
        String fstab = "# comment  with  spaces\r\n\r\n/dev/sda1 / ext4 defaults 0 1\r\n"
                + "/swapfile none swap sw 0 0\r\n\t\n# end";
        String out = Fstab.commentOutSwap(fstab);
        assertEquals(fstab.replace("/swapfile", M + "/swapfile"), out);
        assertEquals(List.of("/swapfile none swap sw 0 0\r"), Fstab.activeSwapEntries(fstab));
    }

    @Test
    void severalSwapEntriesAreAllCommentedInOrder() {
        String fstab = "/swap1 none swap sw 0 0\n/dev/sda1 / ext4 defaults 0 1\nUUID=x none swap sw 0 0\n"
                + "/dev/sdb1 /swap ext4 defaults 0 2\n";
        assertEquals(List.of("/swap1 none swap sw 0 0", "UUID=x none swap sw 0 0"), Fstab.activeSwapEntries(fstab));
        assertEquals(M + "/swap1 none swap sw 0 0\n/dev/sda1 / ext4 defaults 0 1\n" + M + "UUID=x none swap sw 0 0\n"
                + "/dev/sdb1 /swap ext4 defaults 0 2\n", Fstab.commentOutSwap(fstab));
    }

    @Test
    void idempotent() {
        String once = Fstab.commentOutSwap(UBUNTU);
        assertEquals(once, Fstab.commentOutSwap(once));
        assertEquals(List.of(), Fstab.activeSwapEntries(once));
        assertFalse(once.contains(M + M));
    }

    @Test
    void noSwapMeansSameText() {
        String fstab = "/dev/sda1 / ext4 defaults 0 1\n";
        assertEquals(fstab, Fstab.commentOutSwap(fstab));
    }

    @Test
    void recognisesItsOwnMarkerOnly() {
        assertTrue(Fstab.isDisabledByGpuctl(M + "/swapfile none swap sw 0 0"));
        assertFalse(Fstab.isDisabledByGpuctl("#/swapfile none swap sw 0 0"));
        assertFalse(Fstab.isDisabledByGpuctl("/swapfile none swap sw 0 0"));
        assertFalse(Fstab.isDisabledByGpuctl(M + "/dev/sda1 / ext4 defaults 0 1"));
    }
}
