package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;

/** Reads whole input files, turning every way that can fail into a one-line {@link BadInputException}. */
public final class InputFiles {
  /** Members files and snapshots are kilobytes; a limit keeps a wrong path (a disk image) from exhausting memory. */
  static final long MAX_BYTES = 64L << 20;

  private InputFiles() {}

  /**
   * The file's bytes.
   *
   * @param what what the file should be, for messages ("members file", "snapshot file")
   */
  public static byte[] read(Path path, String what) {
    if (Files.isDirectory(path)) {
      throw new BadInputException(what + " " + path + " is a directory");
    }
    try {
      long size = Files.size(path);
      if (size > MAX_BYTES) {
        throw new BadInputException(String.format(Locale.ROOT,
            "%s %s is %d bytes; a %s is at most %d bytes", what, path, size, what, MAX_BYTES));
      }
      return Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      throw new BadInputException(what + " " + path + " does not exist", e);
    } catch (AccessDeniedException e) {
      throw new BadInputException("cannot read " + what + " " + path + ": permission denied", e);
    } catch (IOException e) {
      throw new BadInputException("cannot read " + what + " " + path + ": " + e.getMessage(), e);
    }
  }
}
