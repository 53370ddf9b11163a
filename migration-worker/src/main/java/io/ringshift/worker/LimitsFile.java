package io.ringshift.worker;

import io.ringshift.ring.ByteUnits;
import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A worker's limits file ({@code ringshift worker --limits-file}): rates and caps an operator can change while the
 * worker runs. A properties file whose keys are the option names without dashes in front ({@code bytes-per-second},
 * {@code per-source-bytes-per-second}, {@code max-tasks}, {@code max-tasks-per-source},
 * {@code max-tasks-per-target}); a key left out keeps the value of the command line. The worker checks the file
 * once a second and applies a changed one at once; a file with a bad value is refused with a message naming the
 * key, the value and the rule, and the limits in force stay.
 */
public final class LimitsFile {
  public static final Set<String> KEYS = Set.of("bytes-per-second", "per-source-bytes-per-second", "max-tasks",
      "max-tasks-per-source", "max-tasks-per-target");

  private final Path path;
  private final Limits base;
  private final String name;
  private FileTime seenModified;
  private long seenSize = -1;
  private String seenContent;

  /**
   * @param base the limits of the command line, which keys left out of the file keep
   */
  public LimitsFile(Path path, Limits base) {
    this(path, base, "limits file");
  }

  /** @param name how messages name the file ({@code --limits-file} for the command line's option) */
  public LimitsFile(Path path, Limits base, String name) {
    this.path = Objects.requireNonNull(path);
    this.base = Objects.requireNonNull(base);
    this.name = Objects.requireNonNull(name);
  }

  public Path path() {
    return path;
  }

  /** Reads the file now: the limits it sets. @throws IllegalArgumentException for a missing file or a bad value */
  public Limits read() {
    String content;
    try {
      seenModified = Files.getLastModifiedTime(path);
      seenSize = Files.size(path);
      content = Files.readString(path);
    } catch (IOException e) {
      throw new IllegalArgumentException(name + " " + path + " cannot be read: " + e.getMessage(), e);
    }
    seenContent = content;
    return parse(content, base, name + " " + path);
  }

  /**
   * The file's limits if it changed since it was last read, otherwise null. A file that changed but reads the
   * same (touched, rewritten with equal content) is not a change.
   *
   * @throws IllegalArgumentException when the changed file cannot be read or has a bad value
   */
  public Limits changed() {
    try {
      if (Files.getLastModifiedTime(path).equals(seenModified) && Files.size(path) == seenSize) {
        return null;
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(name + " " + path + " cannot be read: " + e.getMessage(), e);
    }
    String before = seenContent;
    Limits limits = read();
    return seenContent.equals(before) ? null : limits;
  }

  /**
   * Checks the file every {@code interval} on a daemon thread and hands a changed file's limits to {@code onChange};
   * a changed file that cannot be read or has a bad value goes to {@code onRefused} with the message, and the
   * limits in force stay. Closing stops the checks.
   */
  public AutoCloseable watch(Duration interval, Consumer<Limits> onChange, Consumer<String> onRefused) {
    ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "ringshift-worker-limits");
      t.setDaemon(true);
      return t;
    });
    watch.scheduleWithFixedDelay(() -> {
      try {
        Limits limits = changed();
        if (limits != null) {
          onChange.accept(limits);
        }
      } catch (IllegalArgumentException e) {
        onRefused.accept(e.getMessage());
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    return watch::shutdownNow;
  }

  /** The limits a file's content sets over {@code base}. @throws IllegalArgumentException naming the key and value; messages start with {@code where} */
  public static Limits parse(String content, Limits base, String where) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(content));
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
    Set<String> unknown = new TreeSet<>(p.stringPropertyNames());
    unknown.removeAll(KEYS);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(where + ": unknown key " + String.join(", ", unknown)
          + "; the keys are " + new TreeSet<>(KEYS));
    }
    Map<String, String> v = new java.util.HashMap<>();
    p.stringPropertyNames().forEach(k -> v.put(k, p.getProperty(k).strip()));
    long perWorker = size(v, "bytes-per-second", base.bytesPerSecond(), where);
    long perSource = size(v, "per-source-bytes-per-second", base.perSourceBytesPerSecond(), where);
    int tasks = count(v, "max-tasks", base.maxTasks(), where);
    int perSourceTasks = count(v, "max-tasks-per-source", base.maxTasksPerSource(), where);
    int perTargetTasks = count(v, "max-tasks-per-target", base.maxTasksPerTarget(), where);
    try {
      return new Limits(perWorker, perSource, tasks, perSourceTasks, perTargetTasks);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
  }

  private static long size(Map<String, String> values, String key, long otherwise, String where) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    try {
      return ByteUnits.parse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": " + key + ": " + e.getMessage(), e);
    }
  }

  private static int count(Map<String, String> values, String key, int otherwise, String where) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    try {
      int n = Integer.parseInt(value);
      if (n < 1) {
        throw new IllegalArgumentException(where + ": " + key + " was " + n + "; it must be at least 1");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: %s was '%s'; it must be a whole "
          + "number of tasks, at least 1", where, key, value), e);
    }
  }
}
