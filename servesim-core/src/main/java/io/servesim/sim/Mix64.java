package io.servesim.sim;

/** 64-bit mixing functions used for seeds and chained block hashes. */
public final class Mix64 {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private Mix64() {}

    /**
     * Stafford's variant 13 of the MurmurHash3 finalizer (as used by SplitMix64): a bijective avalanche of 64 bits.
     */
    public static long fmix(long z) {
        long x = z;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }

    /** Combines two 64-bit values into one well-mixed value (order matters). */
    public static long mix(long a, long b) {
        return fmix(a * GOLDEN + fmix(b + GOLDEN));
    }
}
