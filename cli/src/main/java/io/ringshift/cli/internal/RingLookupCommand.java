package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.UnderReplication;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift ring lookup}: keys on stdin, {@code key<TAB>owner1,owner2,...} on stdout, in input order.
 *
 * <p>Design: the command works on bytes, not characters. Each line's bytes are hashed where they lie in the
 * read buffer (the ring hash is defined over the key's UTF-8 bytes, which is what a UTF-8 text line is), the
 * range is found with one search, and the answer for that range was encoded once up front, so a key costs a
 * hash, a search and two buffer copies: no String, no regex, no per-key flush (docs/cli.md times a million
 * keys, with the command that reproduces it).
 *
 * <p>Line rules: a line ends at {@code \n}; one {@code \r} before it is dropped (CRLF input). The key is the
 * whole line, tabs included; since member ids contain no control characters, consumers split an output line at
 * its last tab. An empty line is the empty key and is answered like any other, so output line {@code i}
 * always answers input line {@code i}. A last line without a newline is still a key.
 */
@Command(
    name = "lookup",
    mixinStandardHelpOptions = true,
    description = {
      "Reads keys from stdin, one per line, and writes key<TAB>owner1,owner2,... for each, in input order, owners "
          + "in preference order (primary first).",
      "A line ends at \\n (a \\r before it is dropped); the key is the whole line, tabs included, so split output "
          + "lines at their last tab. An empty line is the empty key."
    })
public final class RingLookupCommand implements Callable<Integer> {
  /** Longest accepted key; a longer line is almost surely not a key file. */
  static final int MAX_KEY_BYTES = 16 << 20;

  @Spec private CommandSpec spec;

  @Option(names = "--snapshot", required = true, paramLabel = "FILE", description = "Snapshot file.")
  private Path snapshot;

  @Option(names = "--replicas", paramLabel = "R",
      description = "Owners per key. At most the snapshot's R: the first R of its replicas (the same as an R-walk). "
          + "More: the ring is rebuilt from the snapshot's members with R replicas (said on stderr).")
  private Integer replicas;

  @Override
  public Integer call() {
    RingSnapshot ring = SnapshotFiles.read(snapshot).ring();
    PrintWriter stderr = spec.commandLine().getErr();
    int published = ring.replicas();
    int wanted = published;
    if (replicas != null) {
      if (replicas < 1) {
        throw new BadInputException("--replicas was " + replicas + "; it must be >= 1");
      }
      wanted = replicas;
      if (replicas > published) {
        ring = rebuildWithReplicas(ring, replicas);
        stderr.printf(Locale.ROOT, "ringshift: the snapshot places %d replicas per key; rebuilt its ring with "
            + "--replicas %d for this lookup (not the published placement)%n", published, replicas);
      }
    }
    for (UnderReplication u : ring.underReplication()) {
      stderr.printf(Locale.ROOT, "ringshift: warning: under-replicated: %s%n", u.detail());
    }
    stderr.flush();

    try {
      lookUp(ring, wanted, System.in, new StdoutSink(System.out));
    } catch (StdoutFailedException e) {
      stderr.println("ringshift: stopped: " + e.getMessage());
      stderr.flush();
      return 1;
    } catch (IOException e) {
      throw new UncheckedIOException("reading keys from stdin failed", e);
    }
    return 0;
  }

  /** Writing to stdout failed, typically because the reading end of a pipe was closed. */
  static final class StdoutFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    StdoutFailedException(String message) {
      super(message);
    }
  }

  /**
   * Stdout that reports failure. {@link PrintStream} swallows write errors and only sets a flag, so without
   * checking it the command would read and hash all of stdin after {@code | head} closed the pipe.
   */
  private static final class StdoutSink extends OutputStream {
    private final PrintStream stdout;

    StdoutSink(PrintStream stdout) {
      this.stdout = stdout;
    }

    @Override
    public void write(int b) throws IOException {
      stdout.write(b);
      check();
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
      stdout.write(bytes, offset, length);
      check();
    }

    @Override
    public void flush() throws IOException {
      check();
    }

    // checkError() flushes first, which is wanted here: it is called once per 64 KiB block.
    private void check() throws StdoutFailedException {
      if (stdout.checkError()) {
        throw new StdoutFailedException("could not write to stdout (was the pipe closed?)");
      }
    }
  }

  private static RingSnapshot rebuildWithReplicas(RingSnapshot ring, int replicas) {
    try {
      return ring.toBuilder().replicas(replicas).build();
    } catch (RingException e) {
      throw new BadInputException("--replicas " + replicas + ": " + e.getMessage(), e);
    }
  }

  /**
   * Answers every line of {@code in} on {@code out}; returns the number of keys. Does not close either stream.
   */
  static long lookUp(RingSnapshot ring, int replicas, InputStream in, OutputStream sink) throws IOException {
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
          throw new BadInputException(String.format(Locale.ROOT,
              "stdin line %d is longer than %d bytes; expected one key per line", keys + 1, MAX_KEY_BYTES));
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
