package io.ringshift.storage;

/**
 * A ring range {@code (start, end]} of unsigned 64-bit positions carried in a long's bits: the range a
 * {@code RangeCopyTask} names. It wraps past the top of the ring when {@code start >= end} (unsigned), and
 * {@code start == end} is the whole ring (docs/placement.md section 6).
 */
public record RingRange(long start, long end) {

  public static RingRange of(long start, long end) {
    return new RingRange(start, end);
  }

  /** The whole ring. */
  public static RingRange whole() {
    return new RingRange(0, 0);
  }

  public boolean isWhole() {
    return start == end;
  }

  /** Whether the range wraps past the top of the ring (and is not the whole ring). */
  public boolean wraps() {
    return Long.compareUnsigned(start, end) > 0;
  }

  /** Whether {@code position} lies in {@code (start, end]}. */
  public boolean contains(long position) {
    if (isWhole()) {
      return true;
    }
    boolean afterStart = Long.compareUnsigned(position, start) > 0;
    boolean atOrBeforeEnd = Long.compareUnsigned(position, end) <= 0;
    return wraps() ? afterStart || atOrBeforeEnd : afterStart && atOrBeforeEnd;
  }

  @Override
  public String toString() {
    return String.format("(%016x, %016x]", start, end);
  }
}
