package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ConnectProgressTest {
    static long s(long seconds) { return TimeUnit.SECONDS.toNanos(seconds); }

    @Test void namesTheHostsStillConnectingOldestFirst() {
        Map<String, Long> started = new LinkedHashMap<>();
        started.put("h2", s(100));
        started.put("h1", s(97));
        started.put("h3", s(102));
        assertEquals(Optional.of("still connecting: h1 (6s), h2 (3s)"), ConnectProgress.pending(started, s(103), Duration.ofSeconds(3)));
        assertEquals(Optional.empty(), ConnectProgress.pending(started, s(99), Duration.ofSeconds(3)));
        assertEquals(Optional.empty(), ConnectProgress.pending(Map.of(), s(99), Duration.ofSeconds(3)));
    }

    @Test void manyHostsAreCountedNotAllNamed() {
        Map<String, Long> started = new LinkedHashMap<>();
        for (int i = 1; i <= 11; i++) started.put("w" + i, s(i));
        assertEquals(Optional.of("still connecting: w1 (99s), w2 (98s), w3 (97s), w4 (96s), w5 (95s), w6 (94s), w7 (93s),"
            + " w8 (92s) and 3 more"), ConnectProgress.pending(started, s(100), Duration.ofSeconds(3)));
    }

    @Test void theFirstConnectionOfSeveralIsAnnouncedOnce() {
        List<String> lines = new ArrayList<>();
        try (ConnectProgress p = new ConnectProgress(lines::add, 9, task -> () -> { })) {
            p.started("h1");
            p.started("h2");
            p.finished("h1");
        }
        assertEquals(List.of("connecting to 9 hosts…"), lines);
        List<String> one = new ArrayList<>();
        try (ConnectProgress p = new ConnectProgress(one::add, 1, task -> () -> { })) {
            p.started("m");
        }
        assertEquals(List.of(), one, "one host: no line for it");
    }
}
