package io.servesim.kv;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A request's block table: its arrays are sized once for the tokens the request will hold, and still grow past them. */
class BlockTableTest {

    @Test
    void aTableExpectingItsTokens_allocatesItsHashArrayOnce_throughTheWholeDecode() {
        BlockTable table = new BlockTable();
        table.expectTokens(100 * 16 + 37); // 102 blocks' worth, 102 full ones at most
        table.ensureHashCapacity(40, 16); // the prompt's full blocks
        long[] first = table.hashesView();
        assertThat(first).hasSize(102);
        for (int b = 0; b < 102; b++) {
            table.ensureHashCapacity(b + 1, 16);
            table.addHash(b);
        }
        assertThat(table.hashesView()).isSameAs(first);
        assertThat(table.numHashes()).isEqualTo(102);
    }

    @Test
    void aTableExpectingItsTokens_allocatesItsBlockArrayOnce_forTheLastPartialBlockToo() {
        BlockTable table = new BlockTable();
        table.expectTokens(100 * 16 + 37); // ceil = 103 blocks
        table.ensureBlockCapacity(3, 16);
        int[] first = table.blocksView();
        assertThat(first).hasSize(103);
        for (int b = 0; b < 103; b++) {
            table.ensureBlockCapacity(b + 1, 16);
            table.addBlock(b);
        }
        assertThat(table.blocksView()).isSameAs(first);
    }

    @Test
    void beyondItsExpectedTokens_aTableStillGrows_keepingEveryEntry() {
        BlockTable table = new BlockTable();
        table.expectTokens(32);
        for (int b = 0; b < 50; b++) {
            table.ensureHashCapacity(b + 1, 16);
            table.addHash(1000 + b);
            table.ensureBlockCapacity(b + 1, 16);
            table.addBlock(b);
        }
        assertThat(table.numHashes()).isEqualTo(50);
        assertThat(table.numBlocks()).isEqualTo(50);
        for (int b = 0; b < 50; b++) {
            assertThat(table.hash(b)).isEqualTo(1000 + b);
            assertThat(table.block(b)).isEqualTo(b);
        }
    }

    @Test
    void addHashes_appendsAPrefixOfTheGivenArray() {
        BlockTable table = new BlockTable();
        table.addHash(7);
        table.addHashes(new long[] {11, 12, 13, 14}, 3);
        assertThat(table.numHashes()).isEqualTo(4);
        assertThat(new long[] {table.hash(0), table.hash(1), table.hash(2), table.hash(3)})
                .containsExactly(7, 11, 12, 13);
    }
}
