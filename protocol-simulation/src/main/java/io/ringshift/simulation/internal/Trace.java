package io.ringshift.simulation.internal;

import java.util.ArrayDeque;
import java.util.List;

/**
 * What a scenario did, for determinism and for the report of a failure: a running 64-bit hash of every event and of
 * every record written (the same seed must give the same hash), and the last lines, kept to print.
 */
public final class Trace {
  private final int kept;
  private final ArrayDeque<String> last = new ArrayDeque<>();
  private final boolean keepLines;
  private long hash = 0xcbf29ce484222325L;

  /**
   * @param keepLines whether to keep the last lines (a scenario that failed is run again with them)
   * @param kept how many
   */
  public Trace(boolean keepLines, int kept) {
    this.keepLines = keepLines;
    this.kept = kept;
  }

  void event(long at, String what) {
    mix(at);
    mix(what);
  }

  /** A fact of the scenario (a record written, an outcome), mixed into the hash and kept. */
  public void note(long at, String what) {
    mix(what);
    if (keepLines) {
      line(at + " ms  " + what);
    }
  }

  /** Mixes bytes (a record's value) into the hash. */
  public void mix(byte[] bytes) {
    if (bytes == null) {
      mix(-1L);
      return;
    }
    for (byte b : bytes) {
      hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
    }
  }

  public void mix(String s) {
    for (int i = 0; i < s.length(); i++) {
      hash = (hash ^ s.charAt(i)) * 0x100000001b3L;
    }
  }

  public void mix(long v) {
    for (int i = 0; i < 8; i++) {
      hash = (hash ^ ((v >>> (8 * i)) & 0xff)) * 0x100000001b3L;
    }
  }

  private void line(String s) {
    last.add(s);
    if (last.size() > kept) {
      last.poll();
    }
  }

  public long hash() {
    return hash;
  }

  public List<String> lastLines() {
    return List.copyOf(last);
  }
}
