package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RequestLogTest {
    @Test
    void everyRecordReadsBackAsAdded_whetherItsRareColumnsHoldTheirUsualValue_orDifferLateInTheRun() {
        SplittableRandom rng = new SplittableRandom(20261204);
        for (int trial = 0; trial < 50; trial++) {
            RequestLog log = new RequestLog();
            List<RequestRecord> added = new ArrayList<>();
            int n = 1 + rng.nextInt(300);
            // the rare columns start to differ at a random record (or never), so the log must switch mid-run
            int differFrom = rng.nextInt(n + 1);
            for (int i = 0; i < n; i++) {
                boolean rare = i >= differFrom && rng.nextInt(4) == 0;
                RequestRecord r = record(rng, i, rare);
                log.add(r);
                added.add(r);
            }
            assertThat(log.size()).isEqualTo(n);
            for (int i = 0; i < n; i++) {
                RequestRecord r = added.get(i);
                assertThat(log.get(i)).isEqualTo(r);
                assertThat(log.sessionId(i)).isEqualTo(r.sessionId());
                assertThat(log.status(i)).isEqualTo(r.status());
                assertThat(log.hintWorker(i)).isEqualTo(r.hintWorker());
                assertThat(log.migrated(i)).isEqualTo(r.migrated());
                assertThat(log.pullNanos(i)).isEqualTo(r.pullNanos());
                assertThat(log.restarts(i)).isEqualTo(r.restarts());
                assertThat(log.pd(i)).isEqualTo(r.pd());
            }
        }
    }

    private static RequestRecord record(SplittableRandom rng, int id, boolean rare) {
        RequestStatus[] statuses = RequestStatus.values();
        return new RequestRecord(
                id,
                rare ? rng.nextLong(1_000) : -1,
                1 + rng.nextInt(5),
                rng.nextInt(8),
                rng.nextInt(2),
                rng.nextLong(1_000_000),
                rng.nextLong(1_000_000),
                rng.nextLong(1_000_000),
                rng.nextLong(1_000_000),
                rng.nextInt(4096),
                rng.nextInt(512),
                rng.nextInt(4096),
                rng.nextInt(4096),
                rare ? rng.nextInt(100) : 0,
                rare ? rng.nextInt(100) : 0,
                rare ? rng.nextInt(3) : 0,
                statuses[rng.nextInt(statuses.length)],
                rare ? rng.nextInt(8) : -1,
                rare ? rng.nextInt(2) : -1,
                rare ? rng.nextInt(64) : 0,
                rare && rng.nextBoolean(),
                rare ? rng.nextLong(1_000_000) : -1,
                rare ? rng.nextInt(8) : -1,
                rare ? rng.nextInt(2) : 0,
                rare ? new PdFacts(rng.nextInt(8), false, 1, 2, 3, 4, 5, false) : null);
    }
}
