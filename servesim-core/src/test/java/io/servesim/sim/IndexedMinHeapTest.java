package io.servesim.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The indexed heap against a sorted set model: top is the smallest (key, id) after any sets and removes. */
class IndexedMinHeapTest {
    @Test
    void topIsAlwaysTheSmallestKeyThenLowestId_underRandomSetsAndRemoves() {
        IndexedMinHeap h = new IndexedMinHeap();
        long[] keys = new long[300];
        TreeSet<long[]> model =
                new TreeSet<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        List<Boolean> present = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            present.add(false);
        }
        SplittableRandom rng = new SplittableRandom(5);
        for (int step = 0; step < 20_000; step++) {
            int id = rng.nextInt(keys.length);
            if (present.get(id)) {
                model.remove(new long[] {keys[id], id});
            }
            if (rng.nextInt(4) == 0) {
                h.remove(id);
                present.set(id, false);
            } else {
                keys[id] = rng.nextInt(50); // many ties
                h.set(id, keys[id]);
                model.add(new long[] {keys[id], id});
                present.set(id, true);
            }
            assertThat(h.size()).isEqualTo(model.size());
            if (!model.isEmpty()) {
                assertThat(h.peek()).isEqualTo((int) model.first()[1]);
                assertThat(h.peekKey()).isEqualTo(model.first()[0]);
            }
        }
    }
}
