package io.ringshift.devkit.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import java.util.Properties;

/**
 * The broker's log directory. A temporary one is created here and deleted on close; a kept one is the
 * caller's and is never deleted. Kafka writes {@code meta.properties} into a formatted directory; its
 * {@code cluster.id} is what makes a restart on kept data the same cluster.
 */
public final class DataDir {
  static final String META_PROPERTIES = "meta.properties";
  static final String CLUSTER_ID = "cluster.id";
  private static final String TEMP_PREFIX = "ringshift-kafka-";

  private final Path path;
  private final boolean temporary;

  private DataDir(Path path, boolean temporary) {
    this.path = path;
    this.temporary = temporary;
  }

  /** A new, empty directory under {@code java.io.tmpdir}, deleted by {@link #deleteIfTemporary()}. */
  public static DataDir temporary() throws IOException {
    return new DataDir(Files.createTempDirectory(TEMP_PREFIX).toAbsolutePath(), true);
  }

  /**
   * The caller's directory, created if absent. Refuses a path that is a file, and a non-empty directory that
   * Kafka did not format: formatting writes Kafka's files into it, which must never happen to, say, a home
   * directory passed by mistake.
   */
  public static DataDir kept(Path requested) throws IOException, InvalidDataDirException {
    Path path = requested.toAbsolutePath().normalize();
    if (Files.exists(path) && !Files.isDirectory(path)) {
      throw new InvalidDataDirException(path + " is not a directory");
    }
    Files.createDirectories(path);
    if (!Files.exists(path.resolve(META_PROPERTIES)) && !isEmpty(path)) {
      throw new InvalidDataDirException(path + " is not empty and holds no Kafka " + META_PROPERTIES
          + "; give an empty or new directory, or one a previous embedded broker wrote");
    }
    return new DataDir(path, false);
  }

  public Path path() {
    return path;
  }

  public boolean isTemporary() {
    return temporary;
  }

  /** The cluster id of a directory Kafka already formatted, empty for a fresh one. */
  public Optional<String> formattedClusterId() throws IOException {
    Path meta = path.resolve(META_PROPERTIES);
    if (!Files.exists(meta)) {
      return Optional.empty();
    }
    Properties properties = new Properties();
    try (InputStream in = Files.newInputStream(meta)) {
      properties.load(in);
    }
    String clusterId = properties.getProperty(CLUSTER_ID);
    if (clusterId == null || clusterId.isBlank()) {
      throw new IOException(meta + " has no " + CLUSTER_ID);
    }
    return Optional.of(clusterId.trim());
  }

  /** Deletes a temporary directory and everything in it; leaves a kept one alone. Safe to call twice. */
  public void deleteIfTemporary() {
    if (temporary) {
      deleteRecursively(path);
    }
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      return !entries.iterator().hasNext();
    }
  }

  static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
          // A file that vanished while we walked is what we wanted anyway.
          if (e instanceof NoSuchFileException) {
            return FileVisitResult.CONTINUE;
          }
          throw e;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
          if (e != null && !(e instanceof NoSuchFileException)) {
            throw e;
          }
          Files.deleteIfExists(dir);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + root, e);
    }
  }

  /** The requested directory cannot hold a broker's data. */
  public static final class InvalidDataDirException extends Exception {
    private static final long serialVersionUID = 1L;

    InvalidDataDirException(String message) {
      super(message);
    }
  }

  @Override
  public String toString() {
    return path + (temporary ? " (temporary)" : " (kept)");
  }
}
