package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.workload.Request;
import org.junit.jupiter.api.Test;

/** Where a request's block hashes come from: dispatch, or its own table when dispatch hashed nothing. */
class SequenceHashesTest {

    /**
     * A seeded prompt dispatched without hashes (no router reads them: {@code Cluster.dispatchHashes}; hash-id rows alike) is hashed
     * straight into its block table when it first needs them: 100 tokens in blocks of 16 are 6 full blocks with the
     * values dispatch would have given.
     */
    @Test
    void aSeededPromptDispatchedWithoutHashes_isHashedIntoItsTable_withDispatchsValues() {
        Request r = Request.ofUniqueTokens(0, -1, 0, true, 0, 101, 100, 10, 7, null, -1);
        Sequence dispatched = new Sequence(r, RoutingDecision.NONE, r.promptHashes(16), 4096);
        Sequence lazy = new Sequence(r, RoutingDecision.NONE, null, 4096);
        dispatched.table().expectTokens(110);
        lazy.table().expectTokens(110);
        dispatched.ensureHashes(16);
        lazy.ensureHashes(16);
        assertThat(lazy.table().numHashes())
                .isEqualTo(dispatched.table().numHashes())
                .isEqualTo(6);
        for (int b = 0; b < 6; b++) {
            assertThat(lazy.table().hash(b))
                    .isEqualTo(dispatched.table().hash(b))
                    .isEqualTo(r.promptHashes(16)[b]);
        }
    }
}
