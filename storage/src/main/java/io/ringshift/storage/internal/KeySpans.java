package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * A ring range as data-key spans, in the range's token order: one span for each interval of
 * {@link RingRange#splitAtWrap}, so a scan of the whole ring {@code (x, x]} starts just after {@code x} and ends
 * at {@code x}.
 */
final class KeySpans {
  private static final long MAX = -1L;

  /**
   * One span of data keys.
   *
   * @param low the first data key (inclusive)
   * @param high the data key after the span (exclusive), or null for the end of the key space
   * @param positions the span's first and last positions
   */
  record Span(byte[] low, byte[] high, RingRange.Interval positions) {}

  private KeySpans() {}

  static List<Span> of(RingRange range) {
    List<Span> spans = new ArrayList<>(2);
    for (RingRange.Interval positions : range.splitAtWrap()) {
      byte[] high = positions.last() == MAX ? null : DataKeys.positionPrefix(positions.last() + 1);
      spans.add(new Span(DataKeys.positionPrefix(positions.first()), high, positions));
    }
    return spans;
  }

  /**
   * The spans a scan resumed after {@code cursor} still has to read: the span holding the cursor's position,
   * starting just after the cursor, then the spans after it. The cursor must lie in the range.
   */
  static List<Span> after(RingRange range, Store.Cursor cursor) {
    List<Span> all = of(range);
    List<Span> rest = new ArrayList<>(2);
    boolean found = false;
    for (Span span : all) {
      if (found) {
        rest.add(span);
      } else if (span.positions().contains(cursor.position())) {
        found = true;
        byte[] from = successor(DataKeys.encode(cursor.position(), cursor.key()), cursor.key().length == 0);
        rest.add(new Span(from, span.high(), new RingRange.Interval(cursor.position(), span.positions().last())));
      }
    }
    if (!found) {
      throw new IllegalArgumentException("cursor outside " + range);
    }
    return rest;
  }

  /**
   * The first data key after {@code dataKey} in bytewise order (the key with a zero byte appended), or the key
   * itself when {@code inclusive}.
   */
  private static byte[] successor(byte[] dataKey, boolean inclusive) {
    if (inclusive) {
      return dataKey;
    }
    byte[] next = new byte[dataKey.length + 1];
    System.arraycopy(dataKey, 0, next, 0, dataKey.length);
    return next;
  }
}
