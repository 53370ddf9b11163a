package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/** {@code --trusted-key FILE} (repeatable): publisher public keys, read one file at a time so errors name it. */
public final class TrustedKeyFiles {
  private TrustedKeyFiles() {}

  /** The keys of {@code files}. @throws BadInputException naming the file that is missing, unreadable or no key */
  public static TrustedKeys read(List<Path> files) {
    for (Path file : files) {
      if (Files.isDirectory(file)) {
        throw new BadInputException("trusted key file " + file + " is a directory");
      }
      read(List.of(file), file);
    }
    return read(files, null);
  }

  private static TrustedKeys read(List<Path> files, Path file) {
    try {
      return TrustedKeys.read(files);
    } catch (NoSuchFileException e) {
      throw new BadInputException("trusted key file " + e.getFile() + " does not exist", e);
    } catch (AccessDeniedException e) {
      throw new BadInputException("cannot read trusted key file " + e.getFile() + ": permission denied", e);
    } catch (IOException e) {
      throw new BadInputException("cannot read trusted key file " + file + ": " + e, e);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }
}
