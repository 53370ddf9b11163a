package io.ringshift.cli.internal;

import io.ringshift.protocol.AtomicFiles;
import io.ringshift.cli.BadInputException;
import io.ringshift.client.RingClient;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.RingSnapshotCodec;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Snapshot files: Avro single-object encoded {@code RingSnapshot} records (see schemas/). */
final class SnapshotFiles {
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private SnapshotFiles() {}

  /** A snapshot read, decoded and verified (checksum rebuilt), with its size on disk. */
  record Loaded(RingSnapshot ring, int bytes) {}

  /**
   * Reads a snapshot file ({@code ring build}'s) or a ring file that nodes and clients persist (a {@code
   * ring-snapshot.bin}: the published snapshot in a frame with its publish time), recognised by its first bytes.
   */
  static Loaded read(Path path) {
    byte[] bytes = InputFiles.read(path, "snapshot file");
    if (RingClient.looksLikePersistFile(bytes)) {
      try {
        return new Loaded(RingClient.readPersistFile(path).snapshot().ring(), bytes.length);
      } catch (IOException e) {
        throw new BadInputException(e.getMessage(), e);
      } catch (CodecException e) {
        throw new BadInputException(path + " is a persisted ring file whose snapshot is not valid: " + e.getMessage(),
            e);
      }
    }
    try {
      return new Loaded(CODEC.decode(bytes), bytes.length);
    } catch (CodecException e) {
      throw new BadInputException(path + " is not a valid ring snapshot: " + e.getMessage(), e);
    }
  }

  static byte[] encode(RingSnapshot ring) {
    try {
      return CODEC.encode(ring);
    } catch (CodecException e) {
      throw new BadInputException("cannot encode the ring: " + e.getMessage(), e);
    }
  }

  /**
   * Writes the file so that readers (and a failed run) see either the old content or the complete new one: the
   * bytes go to a temporary file in the same directory, are forced to disk, and the file is moved into place.
   */
  static void writeAtomically(Path target, byte[] bytes) {
    Path absolute = target.toAbsolutePath();
    Path directory = absolute.getParent();
    if (directory == null || !Files.isDirectory(directory)) {
      throw new BadInputException("cannot write " + target + ": directory " + directory + " does not exist");
    }
    if (Files.isDirectory(absolute)) {
      throw new BadInputException("cannot write " + target + ": it is a directory");
    }
    try {
      AtomicFiles.write(absolute, bytes, false);
    } catch (IOException e) {
      throw new BadInputException("cannot write " + target + ": " + describe(e), e);
    }
  }

  private static String describe(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
