package io.ringshift.storage.internal;

import io.ringshift.storage.RingRange;
import io.ringshift.storage.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * A ring range as data-key spans, in the range's token order. {@code (s, e]} with {@code s < e} (unsigned) is
 * one span; a wrapping range and the whole ring {@code (x, x]} are {@code (s, MAX]} then {@code [0, e]}, so a
 * scan of the whole ring {@code (x, x]} starts just after {@code x} and ends at {@code x}.
 */
final class KeySpans {
  private static final long MAX = -1L;

  /**
   * One span of data keys.
   *
   * @param low the first data key (inclusive)
   * @param high the data key after the span (exclusive), or null for the end of the key space
   * @param firstPosition the span's first position, {@code lastPosition} its last one (both inclusive)
   */
  record Span(byte[] low, byte[] high, long firstPosition, long lastPosition) {
    boolean contains(long position) {
      return Long.compareUnsigned(position, firstPosition) >= 0 && Long.compareUnsigned(position, lastPosition) <= 0;
    }
  }

  private KeySpans() {}

  static List<Span> of(RingRange range) {
    long s = range.start();
    long e = range.end();
    List<Span> spans = new ArrayList<>(2);
    if (Long.compareUnsigned(s, e) < 0) {
      spans.add(span(s + 1, e));
    } else {
      if (s != MAX) {
        spans.add(span(s + 1, MAX));
      }
      spans.add(span(0, e));
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
      } else if (span.contains(cursor.position())) {
        found = true;
        byte[] from = successor(DataKeys.encode(cursor.position(), cursor.key()), cursor.key().length == 0);
        rest.add(new Span(from, span.high(), cursor.position(), span.lastPosition()));
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

  private static Span span(long first, long last) {
    byte[] high = last == MAX ? null : DataKeys.positionPrefix(last + 1);
    return new Span(DataKeys.positionPrefix(first), high, first, last);
  }
}
