package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TypedFactsTest {
    record Words(List<String> words) {}

    @Test void aTypedFactIsParsedOnceAndAgainOnlyWhenItsTextChanges() {
        AtomicInteger parses = new AtomicInteger();
        Facts.Key<Words> key = new Facts.Key<>("host.w1.words", Words.class, t -> {
            parses.incrementAndGet();
            return new Words(List.of(t.split(" ")));
        });
        Facts facts = new Facts();
        assertEquals(Optional.empty(), facts.get(key));
        facts.put("host.w1.words", "a b", false);
        assertEquals(List.of("a", "b"), facts.get(key).orElseThrow().words());
        assertEquals(List.of("a", "b"), facts.get(key).orElseThrow().words());
        assertEquals(1, parses.get());
        facts.put("host.w1.words", "c", false);
        assertEquals(List.of("c"), facts.get(key).orElseThrow().words());
        assertEquals(2, parses.get());
    }
}
