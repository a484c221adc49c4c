package io.servesim.kv;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The prefix-cache index's purge removes exactly the stale entries and leaves a table every live key is found in. */
class HashIndexTest {

    @Test
    void purgeStale_removesExactlyTheEntriesWhoseBlockMovedOn_evenInRunsThatWrapAroundTheTable() {
        SplittableRandom rng = new SplittableRandom(3);
        for (int trial = 0; trial < 2_000; trial++) {
            int blocks = 4 + rng.nextInt(60);
            long[] blockHash = new long[blocks];
            HashIndex index = new HashIndex(-1);
            // few distinct key bits in small tables: long runs of occupied slots, some wrapping past the end
            long[] keys = new long[blocks];
            for (int b = 0; b < blocks; b++) {
                long k;
                do {
                    k = 1L + rng.nextInt(4 * blocks);
                } while (index.containsKey(k));
                keys[b] = k;
                blockHash[b] = k;
                index.put(k, b);
            }
            // some blocks move on: their entries go stale (another hash, or none)
            int stale = 0;
            for (int b = 0; b < blocks; b++) {
                if (rng.nextInt(3) == 0) {
                    blockHash[b] = rng.nextBoolean() ? 0 : -keys[b];
                    stale++;
                }
            }
            int removed = index.purgeStale(blockHash);
            assertThat(removed).as("trial %d", trial).isEqualTo(stale);
            assertThat(index.size()).isEqualTo(blocks - stale);
            for (int b = 0; b < blocks; b++) {
                if (blockHash[b] == keys[b]) {
                    assertThat(index.get(keys[b]))
                            .as("trial %d, live key %d", trial, keys[b])
                            .isEqualTo(b);
                } else {
                    assertThat(index.containsKey(keys[b]))
                            .as("trial %d, stale key %d", trial, keys[b])
                            .isFalse();
                }
            }
        }
    }

    @Test
    void aPurgedIndex_keepsWorkingAsAMap() {
        long[] blockHash = {11, 22, 33};
        HashIndex index = new HashIndex(-1);
        index.put(11, 0);
        index.put(22, 1);
        index.put(33, 2);
        blockHash[1] = 0;
        assertThat(index.purgeStale(blockHash)).isEqualTo(1);
        assertThat(index.get(22)).isEqualTo(-1);
        index.put(44, 1);
        assertThat(index.get(44)).isEqualTo(1);
        assertThat(index.get(11)).isZero();
        assertThat(index.get(33)).isEqualTo(2);
        assertThat(index.size()).isEqualTo(3);
    }
}
