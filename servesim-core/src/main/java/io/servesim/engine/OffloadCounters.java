package io.servesim.engine;

/** Cluster-wide totals of G2 host-tier copies, counted by the ranks' {@link HostOffload} links alone. */
public final class OffloadCounters {
    private long storeBytes;
    private long loadBytes;
    private long loads;

    /** A store of {@code bytes} GPU → host started. */
    void storeStarted(long bytes) {
        storeBytes += bytes;
    }

    /** A load of {@code bytes} host → GPU started. */
    void loadStarted(long bytes) {
        loadBytes += bytes;
        loads++;
    }

    /** Bytes copied GPU → host. */
    public long storeBytes() {
        return storeBytes;
    }

    /** Bytes copied host → GPU. */
    public long loadBytes() {
        return loadBytes;
    }

    /** Loads started. */
    public long loads() {
        return loads;
    }
}
