package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A step batch's aggregates are the same however a decode entry is added. */
class StepBatchTest {

    @Test
    void addDecode_isAddOfOneDecodeToken_sameEntriesAndBitIdenticalSums() {
        StepBatch viaAdd = new StepBatch();
        StepBatch viaDecode = new StepBatch();
        viaAdd.reset(1_000_000);
        viaDecode.reset(1_000_000);
        int[] contexts = {0, 1, 15, 16, 1023, 4095, 123_457, 2_000_000, 7, 31, 64, 99, 100, 101, 5, 6, 17, 3};
        for (int c : contexts) { // more than the initial 16 slots: the arrays grow the same way
            viaAdd.add(1, c, true);
            viaDecode.addDecode(c);
        }
        viaAdd.add(40, 10, false); // a prefill chunk after them
        viaDecode.add(40, 10, false);
        assertThat(viaDecode.size()).isEqualTo(viaAdd.size()).isEqualTo(contexts.length + 1);
        for (int i = 0; i < viaAdd.size(); i++) {
            assertThat(viaDecode.newTokens(i)).isEqualTo(viaAdd.newTokens(i));
            assertThat(viaDecode.contextTokens(i)).isEqualTo(viaAdd.contextTokens(i));
            assertThat(viaDecode.isDecode(i)).isEqualTo(viaAdd.isDecode(i));
        }
        assertThat(Double.doubleToRawLongBits(viaDecode.newTokensSum()))
                .isEqualTo(Double.doubleToRawLongBits(viaAdd.newTokensSum()));
        assertThat(Double.doubleToRawLongBits(viaDecode.causalPairs()))
                .isEqualTo(Double.doubleToRawLongBits(viaAdd.causalPairs()));
        assertThat(Double.doubleToRawLongBits(viaDecode.kvTokens()))
                .isEqualTo(Double.doubleToRawLongBits(viaAdd.kvTokens()));
        assertThat(viaDecode.decodeRequests())
                .isEqualTo(viaAdd.decodeRequests())
                .isEqualTo(contexts.length);
        assertThat(viaDecode.decodeContextTokens()).isEqualTo(viaAdd.decodeContextTokens());
        assertThat(viaDecode.prefillTokens()).isEqualTo(viaAdd.prefillTokens()).isEqualTo(40);
        assertThat(viaDecode.causalPairs()).isEqualTo(2_129_058.0 + 40 * (10 + 41 / 2.0));
    }

    /**
     * A decode run's batch ({@code addDecodeRun}) is n calls of {@code addDecode} on base context + offset: the same
     * entries and bit-identical sums, from one call. Contexts 10, 20, 30 at offset 2: 12 + 22 + 32 = 66 computed, plus
     * three new tokens = 69 KV tokens.
     */
    @Test
    void addDecodeRun_isOneAddDecodePerRequestAtItsContextPlusTheOffset() {
        int[] base = {10, 20, 30, 99}; // the run covers the first three
        StepBatch run = new StepBatch();
        StepBatch one = new StepBatch();
        run.reset(1_000);
        one.reset(1_000);
        run.addDecodeRun(base, 3, 2, 66);
        for (int i = 0; i < 3; i++) {
            one.addDecode(base[i] + 2);
        }
        assertThat(run.size()).isEqualTo(one.size()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(run.newTokens(i)).isEqualTo(one.newTokens(i)).isEqualTo(1);
            assertThat(run.contextTokens(i)).isEqualTo(one.contextTokens(i)).isEqualTo(base[i] + 2);
            assertThat(run.isDecode(i)).isEqualTo(one.isDecode(i)).isTrue();
        }
        assertThat(Double.doubleToRawLongBits(run.newTokensSum()))
                .isEqualTo(Double.doubleToRawLongBits(one.newTokensSum()));
        assertThat(Double.doubleToRawLongBits(run.causalPairs()))
                .isEqualTo(Double.doubleToRawLongBits(one.causalPairs()));
        assertThat(Double.doubleToRawLongBits(run.kvTokens())).isEqualTo(Double.doubleToRawLongBits(one.kvTokens()));
        assertThat(run.kvTokens()).isEqualTo(69.0);
        assertThat(run.decodeContextTokens())
                .isEqualTo(one.decodeContextTokens())
                .isEqualTo(69);
        assertThat(run.decodeRequests()).isEqualTo(3);
        assertThat(run.prefillTokens()).isZero();
        assertThat(run.totalTokens()).isEqualTo(3);

        run.reset(1_000); // a reset batch forgets the run
        run.add(5, 0, false);
        assertThat(run.newTokens(0)).isEqualTo(5);
        assertThat(run.isDecode(0)).isFalse();
    }
}
