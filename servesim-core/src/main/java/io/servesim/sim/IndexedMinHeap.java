package io.servesim.sim;

import java.util.Arrays;

/**
 * A binary min-heap of int ids ordered by (long key, id), with each id's position indexed so that setting a key or
 * removing an id is O(log n). Ids are small non-negative ints (ranks, transfer jobs); the arrays grow to the largest
 * id used. Ties break by the lower id, so the top is unique and deterministic.
 */
public final class IndexedMinHeap {
    private int[] heap = new int[16];
    private int[] position = filled(16);
    private long[] key = new long[16];
    private int size;

    /** Number of ids in the heap. */
    public int size() {
        return size;
    }

    /** Whether {@code id} is in the heap. */
    public boolean contains(int id) {
        return id < position.length && position[id] >= 0;
    }

    /** The id with the smallest key (lowest id among equals); the heap must not be empty. */
    public int peek() {
        return heap[0];
    }

    /** The smallest key; the heap must not be empty. */
    public long peekKey() {
        return key[heap[0]];
    }

    /** The key of an id in the heap. */
    public long keyOf(int id) {
        return key[id];
    }

    /** Inserts {@code id} with {@code k}, or moves it to {@code k} if present. */
    public void set(int id, long k) {
        ensure(id);
        int pos = position[id];
        if (pos < 0) {
            if (size == heap.length) {
                heap = Arrays.copyOf(heap, size * 2);
            }
            pos = size++;
            heap[pos] = id;
            position[id] = pos;
            key[id] = k;
            siftUp(pos);
            return;
        }
        long old = key[id];
        key[id] = k;
        if (k < old) {
            siftUp(pos);
        } else if (k > old) {
            siftDown(pos);
        }
    }

    /** Removes {@code id} if present. */
    public void remove(int id) {
        if (!contains(id)) {
            return;
        }
        int pos = position[id];
        int last = heap[--size];
        position[id] = -1;
        if (pos < size) {
            heap[pos] = last;
            position[last] = pos;
            siftUp(pos);
            siftDown(position[last]);
        }
    }

    private boolean before(int a, int b) {
        return key[a] < key[b] || (key[a] == key[b] && a < b);
    }

    private void siftUp(int pos) {
        int id = heap[pos];
        while (pos > 0) {
            int parent = (pos - 1) >>> 1;
            int p = heap[parent];
            if (!before(id, p)) {
                break;
            }
            heap[pos] = p;
            position[p] = pos;
            pos = parent;
        }
        heap[pos] = id;
        position[id] = pos;
    }

    private void siftDown(int pos) {
        int id = heap[pos];
        while (true) {
            int child = 2 * pos + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && before(heap[child + 1], heap[child])) {
                child++;
            }
            int c = heap[child];
            if (!before(c, id)) {
                break;
            }
            heap[pos] = c;
            position[c] = pos;
            pos = child;
        }
        heap[pos] = id;
        position[id] = pos;
    }

    private void ensure(int id) {
        if (id >= position.length) {
            int cap = Math.max(id + 1, position.length * 2);
            int old = position.length;
            position = Arrays.copyOf(position, cap);
            Arrays.fill(position, old, cap, -1);
            key = Arrays.copyOf(key, cap);
        }
    }

    private static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, -1);
        return a;
    }
}
