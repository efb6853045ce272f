package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
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

    @Test void probesSharingOneAnswerParseItOnceAndAFreshAnswerAgain() throws Exception {
        AtomicInteger parses = new AtomicInteger();
        Facts.Key<Words> key = new Facts.Key<>("cluster words", Words.class, t -> {
            parses.incrementAndGet();
            return new Words(List.of(t.split(" ")));
        });
        Facts facts = new Facts();
        String answer = new String("a b".toCharArray());
        Words first = facts.answer(key, answer);
        assertEquals(List.of("a", "b"), first.words());
        assertEquals(first, facts.answer(key, answer));
        assertEquals(1, parses.get(), "several probes judged on one answer");
        assertEquals(first, facts.answer(key, new String("a b".toCharArray())));
        assertEquals(2, parses.get(), "a probe asked again gets a new answer, read anew");
    }

    @Test void theMastersClusterChecksShareOneCommandAndOneParse() throws Exception {
        var inv = GpuStepTest.INV;
        var ctx = new HostContext(inv, inv.master());
        List<Probe> probes = new java.util.ArrayList<>();
        for (Step s : List.of(new CniStep(), new GpuStep(), new GpuRecordStep(), new SchedulingStep())) probes.addAll(s.verify(ctx));
        List<Probe> cluster = probes.stream().filter(p -> p.command().equals(dev.gpuctl.kube.ClusterView.COMMAND)).toList();
        assertEquals(probes.size() - 2, cluster.size(), "all but the two kubectl diffs read the one answer: "
            + probes.stream().map(Probe::command).filter(c -> !c.equals(dev.gpuctl.kube.ClusterView.COMMAND)).toList());
        String answer = GpuStepTest.cluster();
        var r = new dev.gpuctl.remote.ExecResult(0, answer, "");
        Facts facts = new Facts();
        cluster.get(0).judge().apply(r, facts);
        var parsed = facts.answer(ClusterProbes.CLUSTER, answer);
        for (Probe p : cluster) p.judge().apply(r, facts);
        org.junit.jupiter.api.Assertions.assertSame(parsed, facts.answer(ClusterProbes.CLUSTER, answer), "parsed once for all of them");
    }
}
