package io.ringshift.systemtests.chaos;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One role of the control plane as its own OS process (a child JVM on the test's class path): started, waited for
 * until its output shows it is ready, killed with SIGKILL, restarted with the same arguments (a node on its data dir,
 * an orchestrator on its state dir). Its output, across restarts, goes to one log file.
 */
final class RoleProcess {
  /** The roles' log level ({@code -Dchaos.roleLogLevel}, WARN by default; INFO shows Kafka's rebalances). */
  private static final String LOG_LEVEL = System.getProperty("chaos.roleLogLevel", "warn");

  /**
   * libfaketime, which shifts a role's wall clock ({@link #clockOffset}): {@code -Dchaos.faketime}, by default where
   * Debian's package {@code faketime} puts it.
   */
  static final Path FAKETIME = Path.of(System.getProperty("chaos.faketime",
      "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"));

  private final String name;
  private final List<String> command;
  private final Map<String, String> environment;
  private final Path log;
  private final Pattern ready;
  private Process process;
  private int starts;

  /**
   * @param mainClass the class whose {@code main} the child runs
   * @param tmpDir the child's {@code java.io.tmpdir}: RocksDB extracts its native library (15 MB) there at each start
   *     and a SIGKILL leaves it behind, so it goes with the scenario's directory rather than filling {@code /tmp}
   * @param ready a line of the child's output that says it serves
   */
  RoleProcess(String name, String mainClass, List<String> args, Path log, Path tmpDir, Pattern ready) {
    this(name, mainClass, args, log, tmpDir, ready, Map.of());
  }

  /** As above, with {@code environment} added to the child's (a {@link #clockOffset}, say). */
  RoleProcess(String name, String mainClass, List<String> args, Path log, Path tmpDir, Pattern ready,
      Map<String, String> environment) {
    this.name = name;
    this.environment = Map.copyOf(environment);
    this.log = log;
    this.ready = ready;
    this.command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=" + LOG_LEVEL,
        "-Djava.io.tmpdir=" + tmpDir.toAbsolutePath(), "-cp", System.getProperty("java.class.path"), mainClass));
    this.command.addAll(args);
  }

  String name() {
    return name;
  }

  /**
   * The environment that runs a child with its wall clock {@code seconds} off, or empty when {@link #FAKETIME} is not
   * installed. libfaketime shifts every clock by the same offset, the monotonic one too: {@code System.nanoTime} has no
   * meaningful origin, so its intervals, and the timeouts and rates measured with it, stay right. Not {@code
   * FAKETIME_DONT_FAKE_MONOTONIC=1}: with it, libfaketime 0.9.10 (Debian's) makes every timed wait of the JVM ({@code
   * Object.wait(ms)}, and so Kafka's clients' waits) return at once, and a role spins; {@link #probe} checks for that.
   */
  static Optional<Map<String, String>> clockOffset(double seconds) {
    if (!Files.isReadable(FAKETIME)) {
      return Optional.empty();
    }
    return Optional.of(Map.of("LD_PRELOAD", FAKETIME.toString(),
        "FAKETIME", String.format(Locale.ROOT, "%+.1fs", seconds)));
  }

  /**
   * Prints how long a timed wait of 200 ms took by {@code System.nanoTime()}, then the child's {@code
   * System.currentTimeMillis()}: {@link #probe} runs it.
   */
  public static final class ClockProbe {
    private ClockProbe() {}

    public static void main(String[] args) throws InterruptedException {
      Object monitor = new Object();
      long before = System.nanoTime();
      synchronized (monitor) {
        monitor.wait(200);
      }
      System.out.println((System.nanoTime() - before) / 1_000_000);
      System.out.println(System.currentTimeMillis());
    }
  }

  /**
   * How far off the test's clock a child JVM run with {@code environment} finds its wall clock, in seconds: what
   * {@link ClockProbe} prints less the midpoint of the test's clock before and after, and half their distance.
   *
   * @throws IllegalStateException when the child's timed wait of 200 ms took less than 150 ms by its own monotonic
   *     clock: roles so run would spin in every wait (see {@link #clockOffset})
   */
  static double[] probe(Map<String, String> environment) {
    ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        ClockProbe.class.getName()).redirectErrorStream(true);
    builder.environment().putAll(environment);
    long before = System.currentTimeMillis();
    String out;
    try {
      Process p = builder.start();
      out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor(60, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new IllegalStateException("cannot run the clock probe: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    long after = System.currentTimeMillis();
    long child;
    long waited;
    try {
      List<String> lines = out.lines().toList();
      waited = Long.parseLong(lines.get(lines.size() - 2));
      child = Long.parseLong(lines.get(lines.size() - 1));
    } catch (NumberFormatException | IndexOutOfBoundsException e) {
      throw new IllegalStateException("the clock probe printed no time with " + environment + ": " + out, e);
    }
    if (waited < 150) {
      throw new IllegalStateException("a JVM run with " + environment + " waited " + waited + " ms in a timed wait of "
          + "200 ms: this libfaketime breaks the JVM's timed waits, and roles so run would spin");
    }
    return new double[] {(child - (before + after) / 2.0) / 1000, (after - before) / 2000.0};
  }

  /** Starts the process and waits until it prints its ready line, at most {@code timeout}. */
  synchronized void start(Duration timeout) {
    launch();
    awaitReady(timeout);
  }

  /** Number of ready lines in the log before the last {@link #launch()}. */
  private long readyBefore;

  /** Starts the process without waiting; {@link #awaitReady} waits for it (several roles start side by side). */
  synchronized void launch() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(name + " runs already");
    }
    readyBefore = readyLines();
    try {
      Files.writeString(log, "---- start " + (++starts) + " of " + name + "\n", StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.environment().putAll(environment);
      process = builder.start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + name + ": " + e, e);
    }
  }

  /**
   * What a role prints when Kafka did not answer within its {@code --timeout} at start (exit 2): a supervisor
   * ({@code restart: unless-stopped} in docker/compose.yaml) starts it again, and so does {@link #awaitReady}.
   */
  private static final String KAFKA_UNAVAILABLE_AT_START = "could not start against Kafka";

  /**
   * Waits until the process {@link #launch() launched} last prints its ready line, at most {@code timeout}. A role
   * that gave up at start because Kafka did not answer within its {@code --timeout} (on a loaded machine, or while
   * the broker restarts) is launched again within the same {@code timeout}, as its supervisor would; any other end
   * before the ready line fails.
   */
  synchronized void awaitReady(Duration timeout) {
    long before = readyBefore;
    try {
      // In this thread: the condition relaunches, which takes this object's lock (held here).
      await(name + " ready").atMost(timeout).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
        if (!process.isAlive()) {
          if (process.exitValue() == 2 && output().contains(KAFKA_UNAVAILABLE_AT_START)) {
            launch();
            return false;
          }
          throw new IllegalStateException(name + " ended before it was ready (exit " + process.exitValue()
              + "); its log " + log + " ends: " + tail());
        }
        return readyLines() > before;
      });
    } catch (ConditionTimeoutException e) {
      throw new IllegalStateException(name + " was not ready within " + timeout + "; its log " + log + " ends: "
          + tail(), e);
    }
  }

  /** SIGKILL, and waits until the process is gone. */
  synchronized void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Appends a thread dump of the running process to its log ({@code jcmd PID Thread.print}), for a diagnosis. */
  synchronized void threadDump() {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      Files.writeString(log, "---- thread dump of " + name + "\n", StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.APPEND);
      new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
          String.valueOf(process.pid()), "Thread.print").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start().waitFor(60, TimeUnit.SECONDS);
    } catch (IOException e) {
      // a diagnosis only
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Null while the process runs (or was never started); otherwise how it ended, for a diagnosis. */
  synchronized String ended() {
    return process == null || process.isAlive() ? null : name + " (exit " + process.exitValue() + ")";
  }

  synchronized boolean alive() {
    return process != null && process.isAlive();
  }

  private long readyLines() {
    try {
      if (!Files.exists(log)) {
        return 0;
      }
      try (var lines = Files.lines(log, StandardCharsets.UTF_8)) {
        return lines.filter(l -> ready.matcher(l).find()).count();
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      return 0;
    }
  }

  /** What the process launched last has printed so far. */
  String output() {
    try {
      String all = Files.readString(log, StandardCharsets.UTF_8);
      return all.substring(Math.max(0, all.lastIndexOf("---- start " + starts + " of " + name + "\n")));
    } catch (IOException e) {
      return "";
    }
  }

  String tail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n  ", lines.subList(Math.max(0, lines.size() - 12), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
