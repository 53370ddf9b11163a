package io.ringshift.protocol;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes files so that readers, and a run that fails half-way, see either the old content or the complete new one:
 * the bytes go to a temporary file in the same directory, are forced to disk, and the file is moved into place.
 * Key files, snapshot files, a client's persist file and reports are all written this way.
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /**
   * Writes {@code bytes} to {@code target}, creating its directory if needed.
   *
   * @param secret the file holds a secret: it is created readable by its owner only (where the file system has
   *     POSIX permissions); otherwise it gets the permissions the user's umask gives any new file
   * @throws IOException when the file cannot be written; the target is then unchanged and no temporary file is left
   */
  public static void write(Path target, byte[] bytes, boolean secret) throws IOException {
    Path absolute = target.toAbsolutePath();
    Path directory = absolute.getParent();
    Files.createDirectories(directory);
    Path temporary = directory.resolve("." + absolute.getFileName() + "."
        + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
    try {
      create(temporary, secret);
      try (OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.WRITE)) {
        out.write(bytes);
      }
      // Durable before it becomes visible: a crash after the move must not leave an empty file behind.
      try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
        channel.force(true);
      }
      try {
        Files.move(temporary, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        // Same directory, so this only happens on file systems without atomic rename; replace is the best left.
        Files.move(temporary, absolute, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      try {
        Files.deleteIfExists(temporary);
      } catch (IOException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  private static void create(Path temporary, boolean secret) throws IOException {
    if (secret && temporary.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      FileAttribute<?> ownerOnly = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
      Files.createFile(temporary, ownerOnly);
    } else {
      try {
        Files.createFile(temporary);
      } catch (FileAlreadyExistsException e) {
        throw new IOException("temporary file " + temporary + " exists already", e);
      }
    }
  }
}
