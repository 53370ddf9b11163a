package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import io.ringshift.ring.KeyLines;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.UnderReplication;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift ring lookup}: keys on stdin, {@code key<TAB>owner1,owner2,...} on stdout, in input order.
 *
 * <p>The lines are answered by {@link KeyLines}, which gives the line rules and the design.
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
      KeyLines.lookUp(ring, wanted, System.in, new StdoutSink(System.out));
    } catch (IllegalArgumentException e) {
      throw new BadInputException("stdin " + e.getMessage(), e);
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
}
