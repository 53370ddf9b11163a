package io.ringshift.ring;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * Looks up a stream of keys, one per line, and writes each key with its owners ({@code ringshift ring lookup}).
 *
 * <p>Design: it works on bytes, not characters. Each line's bytes are hashed where they lie in the read buffer
 * (the ring hash is defined over the key's UTF-8 bytes, which is what a UTF-8 text line is), the range is found
 * with one search, and the answer for that range was encoded once up front, so a key costs a hash, a search and
 * two buffer copies: no String, no regex, no per-key flush (docs/cli.md times a million keys, with the command
 * that reproduces it).
 *
 * <p>Line rules: a line ends at {@code \n}; one {@code \r} before it is dropped (CRLF input). The key is the
 * whole line, tabs included; since member ids contain no control characters, consumers split an output line at
 * its last tab. An empty line is the empty key and is answered like any other, so output line {@code i} always
 * answers input line {@code i}. A last line without a newline is still a key.
 */
public final class KeyLines {
  /** Longest accepted key; a longer line is almost surely not a key file. */
  public static final int MAX_KEY_BYTES = 16 << 20;

  private KeyLines() {}

  /**
   * Answers every line of {@code in} on {@code out}: the key, a tab, its first {@code replicas} owners
   * comma-separated in preference order, a newline. Returns the number of keys; closes neither stream.
   *
   * @throws IllegalArgumentException naming the line when a line is longer than {@value #MAX_KEY_BYTES} bytes
   * @throws IOException when reading or writing fails
   */
  public static long lookUp(RingSnapshot ring, int replicas, InputStream in, OutputStream sink) throws IOException {
    byte[][] answers = encodeAnswers(ring, replicas);
    RingHash hash = ring.hash();
    BufferedOutputStream out = new BufferedOutputStream(sink, 1 << 16);
    byte[] buffer = new byte[1 << 16];
    int start = 0;
    int end = 0;
    int scanned = 0;
    long keys = 0;
    boolean eof = false;
    while (true) {
      int newline = indexOf(buffer, (byte) '\n', scanned, end);
      if (newline >= 0) {
        answer(ring, hash, answers, buffer, start, newline, out);
        keys++;
        start = newline + 1;
        scanned = start;
        continue;
      }
      scanned = end;
      if (eof) {
        if (start < end) {
          answer(ring, hash, answers, buffer, start, end, out);
          keys++;
        }
        break;
      }
      if (start > 0) {
        System.arraycopy(buffer, start, buffer, 0, end - start);
        end -= start;
        scanned -= start;
        start = 0;
      } else if (end == buffer.length) {
        if (buffer.length >= MAX_KEY_BYTES) {
          throw new IllegalArgumentException(String.format(Locale.ROOT,
              "line %d is longer than %d bytes; expected one key per line", keys + 1, MAX_KEY_BYTES));
        }
        buffer = Arrays.copyOf(buffer, Math.min(MAX_KEY_BYTES, buffer.length * 2));
      }
      int read = in.read(buffer, end, buffer.length - end);
      if (read < 0) {
        eof = true;
      } else {
        end += read;
      }
    }
    out.flush();
    return keys;
  }

  private static void answer(RingSnapshot ring, RingHash hash, byte[][] answers, byte[] buffer, int from, int to,
      OutputStream out) throws IOException {
    int length = to - from;
    if (length > 0 && buffer[to - 1] == '\r') {
      length--;
    }
    int range = ring.rangeOf(hash.hash(buffer, from, length));
    out.write(buffer, from, length);
    out.write('\t');
    out.write(answers[range]);
  }

  /** For every range: its first {@code replicas} owners, comma-separated, then a newline, as UTF-8. */
  private static byte[][] encodeAnswers(RingSnapshot ring, int replicas) {
    byte[][] answers = new byte[ring.tokenCount()][];
    StringBuilder line = new StringBuilder(64);
    for (int r = 0; r < answers.length; r++) {
      ReplicaSet set = ring.replicasOfRange(r);
      line.setLength(0);
      int count = Math.min(replicas, set.size());
      for (int j = 0; j < count; j++) {
        if (j > 0) {
          line.append(',');
        }
        line.append(set.get(j).id());
      }
      line.append('\n');
      answers[r] = line.toString().getBytes(StandardCharsets.UTF_8);
    }
    return answers;
  }

  private static int indexOf(byte[] buffer, byte value, int from, int to) {
    for (int i = from; i < to; i++) {
      if (buffer[i] == value) {
        return i;
      }
    }
    return -1;
  }
}
