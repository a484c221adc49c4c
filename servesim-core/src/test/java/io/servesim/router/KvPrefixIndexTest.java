package io.servesim.router;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.ints.IntIterator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The router's block index: one holder inline, several in a set, and back as holders leave. */
class KvPrefixIndexTest {
    private static List<Integer> holders(KvPrefixIndex index, long hash) {
        List<Integer> out = new ArrayList<>();
        IntIterator it = index.several(hash);
        if (it == null) {
            int s = index.single(hash);
            if (s >= 0) {
                out.add(s);
            }
            return out;
        }
        while (it.hasNext()) {
            out.add(it.nextInt());
        }
        out.sort(null);
        return out;
    }

    @Test
    void holdersMoveBetweenInlineAndSet_asRanksStoreAndEvict() {
        KvPrefixIndex index = new KvPrefixIndex();
        long h = 0xABCL;
        assertThat(index.count(h)).isZero();
        index.add(h, 3);
        index.add(h, 3); // idempotent
        assertThat(index.count(h)).isOne();
        assertThat(index.single(h)).isEqualTo(3);
        assertThat(index.several(h)).isNull();
        index.add(h, 5);
        index.add(h, 7);
        assertThat(index.count(h)).isEqualTo(3);
        assertThat(index.single(h)).isEqualTo(-1); // several hold it
        assertThat(holders(index, h)).containsExactly(3, 5, 7);
        assertThat(index.holds(h, 5)).isTrue();
        assertThat(index.holds(h, 4)).isFalse();
        index.remove(h, 4); // not a holder: nothing changes
        index.remove(h, 5);
        index.remove(h, 3);
        assertThat(index.count(h)).isOne();
        assertThat(index.single(h)).isEqualTo(7); // back inline
        index.remove(h, 9);
        index.remove(h, 7);
        assertThat(index.count(h)).isZero();
        assertThat(index.single(h)).isEqualTo(-1);
        assertThat(index.holds(h, 7)).isFalse();
        index.add(h, 1); // and reusable
        assertThat(index.single(h)).isEqualTo(1);
    }
}
