package io.ringshift.cli.internal;

import io.ringshift.cli.Ringshift;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Runs the real command line in-process with stdin, stdout and stderr captured. {@code ring lookup} writes
 * raw bytes to {@code System.out} (not picocli's writer), so the standard streams themselves are swapped; the
 * lock keeps two runs from interleaving.
 */
public final class Cli {
  private static final Object LOCK = new Object();

  private Cli() {}

  public record Result(int exitCode, byte[] stdoutBytes, String stderr) {
    public String stdout() {
      return new String(stdoutBytes, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
      return "exit " + exitCode + "\n--- stdout\n" + truncate(stdout()) + "\n--- stderr\n" + stderr;
    }

    private static String truncate(String s) {
      return s.length() > 2000 ? s.substring(0, 2000) + "..." : s;
    }
  }

  public static Result run(String... args) {
    return run(new byte[0], args);
  }

  public static Result run(byte[] stdin, String... args) {
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    Result result = run(new ByteArrayInputStream(stdin), stdout, args);
    return new Result(result.exitCode(), stdout.toByteArray(), result.stderr());
  }

  /** Runs with the given stdin and stdout streams; the result's stdout bytes are empty. */
  public static Result run(InputStream stdin, OutputStream stdout, String... args) {
    synchronized (LOCK) {
      InputStream in = System.in;
      PrintStream out = System.out;
      PrintStream err = System.err;
      ByteArrayOutputStream stderr = new ByteArrayOutputStream();
      try {
        System.setIn(stdin);
        System.setOut(new PrintStream(stdout, false, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(stderr, false, StandardCharsets.UTF_8));
        int exit = Ringshift.run(args);
        System.out.flush();
        System.err.flush();
        return new Result(exit, new byte[0], stderr.toString(StandardCharsets.UTF_8));
      } finally {
        System.setIn(in);
        System.setOut(out);
        System.setErr(err);
      }
    }
  }
}
