package io.ringshift.client.internal;

import io.ringshift.protocol.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The cold-start file: the last good snapshot's bytes, exactly as read from Kafka, and its publish time, so that
 * a client started while Kafka is unreachable routes at once. The file is a cache, not a trust anchor: the
 * reader re-verifies the snapshot bytes (checksum and signature) like any record from the topic.
 *
 * <p>Layout, big-endian: the magic {@code RSCF}, the format version (int, 1), the publish time (long, epoch
 * millis), the snapshot length (int) and bytes, and a CRC-32C of everything before it. The CRC protects the
 * publish time, which the snapshot's signature does not cover. Writes go to a temporary file in the same
 * directory, are forced to disk and then moved over the old file atomically, so a reader sees the old file or
 * the new one, never a torn one.
 */
public final class SnapshotFile {
  static final int MAGIC = 0x52534346; // "RSCF": ringshift client file
  static final int VERSION = 1;
  private static final int HEADER = 4 + 4 + 8 + 4;
  /** Far above any snapshot (Kafka's default message limit is 1 MB): a larger length is a corrupt header. */
  static final int MAX_SNAPSHOT_BYTES = 64 << 20;

  private SnapshotFile() {}

  /** What the file holds. */
  public record Contents(byte[] snapshot, long publishedAtMillis) {
    public Contents {
      Objects.requireNonNull(snapshot, "snapshot");
    }
  }

  /** The file's frame is broken: wrong magic or version, truncated, too long, or a CRC mismatch. */
  public static final class CorruptFileException extends IOException {
    private static final long serialVersionUID = 1L;

    CorruptFileException(Path file, String problem) {
      super("cold-start file " + file + " " + problem);
    }
  }

  /** Whether {@code bytes} begin with this file's magic. */
  public static boolean hasMagic(byte[] bytes) {
    return bytes.length >= 4 && ByteBuffer.wrap(bytes, 0, 4).getInt() == MAGIC;
  }

  /** Writes the snapshot and its publish time to {@code file}, atomically. */
  public static void write(Path file, byte[] snapshot, long publishedAtMillis) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(HEADER + snapshot.length + 4);
    buffer.putInt(MAGIC).putInt(VERSION).putLong(publishedAtMillis).putInt(snapshot.length).put(snapshot);
    CRC32C crc = new CRC32C();
    crc.update(buffer.array(), 0, buffer.position());
    buffer.putInt((int) crc.getValue());
    AtomicFiles.write(file, buffer.array(), false);
  }

  /**
   * Reads the file's frame. The snapshot bytes are not verified here.
   *
   * @throws CorruptFileException naming the file and the problem when the frame is broken
   * @throws IOException when the file cannot be read
   */
  public static Contents read(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    if (all.length < HEADER + 4) {
      throw new CorruptFileException(file, String.format(Locale.ROOT,
          "is %d bytes long, shorter than the %d-byte frame: truncated", all.length, HEADER + 4));
    }
    ByteBuffer buffer = ByteBuffer.wrap(all);
    int magic = buffer.getInt();
    if (magic != MAGIC) {
      throw new CorruptFileException(file, String.format(Locale.ROOT,
          "starts with %08x, not the magic %08x (RSCF): not a ringshift cold-start file", magic, MAGIC));
    }
    int version = buffer.getInt();
    if (version != VERSION) {
      throw new CorruptFileException(file, String.format(Locale.ROOT,
          "has format version %d; this client reads version %d", version, VERSION));
    }
    long publishedAtMillis = buffer.getLong();
    int length = buffer.getInt();
    if (length < 0 || length > MAX_SNAPSHOT_BYTES || HEADER + length + 4 != all.length) {
      throw new CorruptFileException(file, String.format(Locale.ROOT,
          "states a %d-byte snapshot but holds %d bytes after the header: truncated or corrupt", length,
          all.length - HEADER - 4));
    }
    byte[] snapshot = new byte[length];
    buffer.get(snapshot);
    CRC32C crc = new CRC32C();
    crc.update(all, 0, HEADER + length);
    int stored = buffer.getInt();
    if (stored != (int) crc.getValue()) {
      throw new CorruptFileException(file, String.format(Locale.ROOT,
          "has CRC-32C %08x but its contents give %08x: corrupt", stored, (int) crc.getValue()));
    }
    return new Contents(snapshot, publishedAtMillis);
  }
}
