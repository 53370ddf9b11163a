package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Verification without a stop (docs/worker.md, "Verification in a transition"): proves that a copy's target holds
 * everything its source held at a cut, while dual writes go on to both.
 *
 * <p>Design note. Three consistent scans of the range are opened one after another: the source (S1, the cut), the
 * target (T), the source again (S2). Each is a snapshot at its opening, so they can then be read side by side in one
 * pass, in the range's token order. Two rules, per key:
 * <ul>
 *   <li><b>Dominance.</b> Every S1 entry is on T at an equal or higher version; a tombstone of S1 is satisfied by no
 *       entry on T too (absent is deleted), never by an older value.
 *   <li><b>Explanation.</b> Every T entry above what S1 holds (a newer version, or a key S1 lacks) is on S2 at an equal
 *       or higher version: a write that reached T after the cut was a dual write, which the source took too. A T
 *       tombstone is explained by S2 lacking the key as well.
 * </ul>
 * Entries are versioned and stores keep the highest (docs/storage.md, "Versions"), so a dual write that reached T
 * before S1 is simply on both. With no writes in flight S1, T and S2 hold the same entries, and the two rules are
 * today's equality check: T's entries are exactly S1's. What fails is reported per key, so that the worker copies the
 * missing entries again (S1's, onto T: max-version-wins makes it safe while writes continue) and reads back the
 * unexplained ones (T's, onto the source: a write that reached T alone was never acknowledged, and completing it is
 * allowed), then verifies again.
 */
final class RangeDominance {
  /** Entries of each kind kept by name; the counts are exact. */
  static final int SAMPLE = 100;

  private RangeDominance() {}

  /**
   * What a check found.
   *
   * @param compared the keys read on either side
   * @param missing S1 entries that T does not hold at their version or above (at most {@link #SAMPLE}); what T must
   *     be given again
   * @param missingCount how many there were
   * @param unexplained T entries above S1 that S2 does not hold either (at most {@link #SAMPLE})
   * @param unexplainedCount how many there were
   * @param cutSequence S1's sequence number on the source: the cut the target is proven to dominate
   */
  record Outcome(long compared, List<Entry> missing, long missingCount, List<Entry> unexplained,
      long unexplainedCount, long cutSequence) {
    boolean holds() {
      return missingCount == 0 && unexplainedCount == 0;
    }

    @Override
    public String toString() {
      return String.format("%d keys compared at cut %d: %d missing or older on the target, %d on the target that the "
          + "source does not explain", compared, cutSequence, missingCount, unexplainedCount);
    }
  }

  /** Checks {@code range} of {@code target} against {@code source} (see the class comment). */
  static Outcome check(Store source, Store target, RingRange range) {
    try (RangeScan s1 = source.scan(range, null); RangeScan t = target.scan(range, null);
        RangeScan s2 = source.scan(range, null)) {
      return check(range, s1, t, s2);
    }
  }

  /** The check over three scans of {@code range}, opened in this order. */
  static Outcome check(RingRange range, RangeScan s1, RangeScan t, RangeScan s2) {
    long start = range.start();
    Cursor a = new Cursor(s1, start);
    Cursor b = new Cursor(t, start);
    Cursor c = new Cursor(s2, start);
    long compared = 0;
    List<Entry> missing = new ArrayList<>();
    long missingCount = 0;
    List<Entry> unexplained = new ArrayList<>();
    long unexplainedCount = 0;
    while (a.head != null || b.head != null) {
      Entry next = a.head == null ? b.head
          : b.head == null ? a.head : order(a.head, b.head, start) <= 0 ? a.head : b.head;
      Entry fromS1 = a.takeIfAt(next);
      Entry onT = b.takeIfAt(next);
      compared++;
      if (fromS1 != null && !dominated(fromS1, onT)) {
        missingCount++;
        if (missing.size() < SAMPLE) {
          missing.add(fromS1);
        }
      }
      if (onT != null && (fromS1 == null || onT.supersedes(fromS1))) {
        c.skipBefore(onT);
        if (!explained(onT, c.takeIfAt(onT))) {
          unexplainedCount++;
          if (unexplained.size() < SAMPLE) {
            unexplained.add(onT);
          }
        }
      }
    }
    return new Outcome(compared, List.copyOf(missing), missingCount, List.copyOf(unexplained), unexplainedCount,
        s1.sequence());
  }

  /**
   * Whether T's entry for the key (null: none) holds what S1 had: S1's entry would not replace it under the store's
   * rule ({@link Entry#supersedes}: versions, then a tombstone over a value, then the larger value), so equal entries
   * and newer ones count, and two different values of one version (entries of before versions) do not.
   */
  private static boolean dominated(Entry fromS1, Entry onT) {
    if (onT == null) {
      return fromS1.isDeletion();
    }
    return !fromS1.supersedes(onT);
  }

  /** Whether the source's second read (null: no entry) explains T's entry: it holds that entry or one that wins. */
  private static boolean explained(Entry onT, Entry fromS2) {
    if (fromS2 == null) {
      return onT.isDeletion();
    }
    return !onT.supersedes(fromS2);
  }

  /**
   * The order scans of a range starting after {@code start} return keys in: by place in the range (position minus
   * start minus one, unsigned: a wrapping range continues at the bottom of the ring), then by key bytes.
   */
  private static int order(Entry x, Entry y, long start) {
    int c = Long.compareUnsigned(x.position() - start - 1, y.position() - start - 1);
    return c != 0 ? c : Arrays.compareUnsigned(x.key(), y.key());
  }

  /** A scan with its next entry at hand. */
  private static final class Cursor {
    private final RangeScan scan;
    private final long start;
    Entry head;

    Cursor(RangeScan scan, long start) {
      this.scan = scan;
      this.start = start;
      advance();
    }

    private void advance() {
      head = scan.hasNext() ? scan.next() : null;
    }

    /** The head when it is {@code e}'s key (and moves past it), else null. */
    Entry takeIfAt(Entry e) {
      if (head != null && order(head, e, start) == 0) {
        Entry taken = head;
        advance();
        return taken;
      }
      return null;
    }

    /** Moves past every entry before {@code e}'s key. */
    void skipBefore(Entry e) {
      while (head != null && order(head, e, start) < 0) {
        advance();
      }
    }
  }
}
