package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The install of an uploaded file into place is given time for the copy it makes, not a fixed minute. */
class InstallTimeoutTest {
    @Test void aSmallFileGetsAMinute() {
        assertEquals(Duration.ofSeconds(60), SftpUpload.installTimeout(0));
        assertEquals(Duration.ofSeconds(60), SftpUpload.installTimeout(4096));
    }

    @Test void aBackupArchiveGetsASecondPer16MiB() {
        assertEquals(Duration.ofSeconds(60 + 192), SftpUpload.installTimeout(3L << 30));
    }
}
