package io.servesim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.kv.BlockHasher;
import org.junit.jupiter.api.Test;

/**
 * Hash-id prompts (Mooncake's {@code hash_ids}) and unique seeded prompts (lengths-only rows): tokens expand when
 * read, and block hashes derive from the ids or the seed with the same prefix identity that hashing the expanded
 * tokens gives.
 */
class HashIdPromptTest {
    private static Request prompt(int length, long... ids) {
        return Request.ofHashIds(0, -1, 0, true, 0, ids, 64, length, 1, 7, null, -1);
    }

    @Test
    void tokens_expandFromTheIds_whenRead() {
        Request r = prompt(100, 11, 22);
        assertThat(r.promptToken(0)).isEqualTo(Request.hashIdToken(11, 0));
        assertThat(r.promptToken(63)).isEqualTo(Request.hashIdToken(11, 63));
        assertThat(r.promptToken(64)).isEqualTo(Request.hashIdToken(22, 0));
        assertThat(r.tokenAt(99)).isEqualTo(Request.hashIdToken(22, 35));
        assertThat(r.promptTokens()).hasSize(100).startsWith(Request.hashIdToken(11, 0), Request.hashIdToken(11, 1));
    }

    @Test
    void derivedBlockHashes_equalExactlyOnEqualIdPrefixes_likeTokenHashes() {
        // engine blocks of 16 inside trace blocks of 64: 4 engine blocks per id
        long[] a = prompt(160, 11, 22, 33).promptHashes(16); // 10 full blocks: ids 11, 22, and half of 33
        long[] b = prompt(200, 11, 22, 44, 55).promptHashes(16); // same first two ids, then different
        long[] c = prompt(130, 11, 22, 33).promptHashes(16); // a shorter prompt over the same ids
        assertThat(a).hasSize(10);
        for (int i = 0; i < 8; i++) {
            assertThat(b[i]).as("block %d", i).isEqualTo(a[i]);
        }
        assertThat(b[8]).isNotEqualTo(a[8]);
        assertThat(b[9]).isNotEqualTo(a[9]);
        assertThat(c).hasSize(8).containsExactly(java.util.Arrays.copyOf(a, 8));
        // the same identity as hashing the expanded tokens: block i equal across prompts exactly when token-hashed
        long[] ta = BlockHasher.promptHashes(prompt(160, 11, 22, 33).promptTokens(), 160, 16);
        long[] tb = BlockHasher.promptHashes(prompt(200, 11, 22, 44, 55).promptTokens(), 200, 16);
        for (int i = 0; i < 10; i++) {
            assertThat(a[i] == b[i]).as("block %d", i).isEqualTo(ta[i] == tb[i]);
        }
        // and never a token hash (salted apart)
        assertThat(a[0]).isNotEqualTo(ta[0]);
    }

    @Test
    void anEngineBlockSizeThatDoesNotDivideTheTraceBlock_hashesTheExpandedTokens() {
        Request r = prompt(150, 11, 22, 33);
        long[] expected = BlockHasher.promptHashes(r.promptTokens(), 150, 48); // 48 does not divide 64
        assertThat(r.promptHashes(48)).containsExactly(expected);
    }

    @Test
    void uniqueSeededPrompts_expandWhenRead_andShareNoBlockWithAnotherSeed() {
        Request a = Request.ofUniqueTokens(0, -1, 0, true, 0, 101, 100, 1, 7, null, -1);
        Request b = Request.ofUniqueTokens(1, -1, 0, true, 0, 202, 100, 1, 7, null, -1);
        assertThat(a.promptToken(5)).isEqualTo((int) ((io.servesim.sim.Mix64.mix(101, 5) >>> 1) % Request.VOCAB));
        long[] ha = a.promptHashes(16);
        long[] hb = b.promptHashes(16);
        assertThat(ha).hasSize(6);
        for (int i = 0; i < 6; i++) {
            assertThat(ha[i]).isNotEqualTo(hb[i]);
        }
        // the same seed is the same prompt (a preempted request finds its own blocks again)
        assertThat(Request.ofUniqueTokens(2, -1, 0, true, 0, 101, 100, 1, 7, null, -1)
                        .promptHashes(16))
                .containsExactly(ha);
        assertThat(Request.ofUniqueTokens(3, -1, 0, true, 0, 101, 40, 1, 7, null, -1)
                        .promptHashes(16))
                .containsExactly(ha[0], ha[1]); // a prefix of it shares its leading blocks
    }

    /**
     * A prompt whose hashes derive from its seed or its hash ids can have them written where they are kept (an
     * engine's block table, when dispatch hashed nothing): the same values as {@code promptHashes}, the first
     * {@code count} of them — for hash ids also when the engine block does not divide the trace block (hashed from the
     * expanded tokens); a prompt of tokens has no such form.
     */
    @Test
    void derivedPrompts_hashIntoAGivenArray_theValuesPromptHashesReturns() {
        Request a = Request.ofUniqueTokens(0, -1, 0, true, 0, 101, 100, 1, 7, null, -1);
        long[] all = a.promptHashes(16);
        long[] dst = new long[10];
        a.promptHashesInto(16, dst, 4);
        assertThat(a.derivedPromptHashes()).isTrue();
        assertThat(dst).containsExactly(all[0], all[1], all[2], all[3], 0, 0, 0, 0, 0, 0);
        assertThatThrownBy(() -> a.promptHashesInto(16, dst, 7)) // 100 tokens hold 6 full blocks of 16
                .isInstanceOf(IllegalStateException.class);

        Request ids = prompt(150, 11, 22, 33); // 150 tokens: 9 blocks of 16, 3 of 48
        assertThat(ids.derivedPromptHashes()).isTrue();
        long[] byIds = new long[9];
        ids.promptHashesInto(16, byIds, 5);
        assertThat(java.util.Arrays.copyOf(byIds, 5)).containsExactly(java.util.Arrays.copyOf(ids.promptHashes(16), 5));
        long[] byTokens = new long[3];
        ids.promptHashesInto(48, byTokens, 3);
        assertThat(byTokens).containsExactly(ids.promptHashes(48));

        Request tokens = new Request(9, -1, 0, true, 0, new int[40], 1, 9);
        assertThat(tokens.derivedPromptHashes()).isFalse();
        assertThatThrownBy(() -> tokens.promptHashesInto(16, dst, 1)).isInstanceOf(IllegalStateException.class);
    }
}
