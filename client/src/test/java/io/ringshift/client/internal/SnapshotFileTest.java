package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFileTest {
  private static final byte[] SNAPSHOT = "not verified here, only framed".getBytes(java.nio.charset.StandardCharsets.UTF_8);

  @TempDir
  Path dir;

  @Test
  void readsBackWhatItWrote() throws IOException {
    Path file = dir.resolve("sub/snapshot.bin");

    SnapshotFile.write(file, SNAPSHOT, 1_700_000_000_123L);
    SnapshotFile.Contents contents = SnapshotFile.read(file);

    assertThat(contents.snapshot()).isEqualTo(SNAPSHOT);
    assertThat(contents.publishedAtMillis()).isEqualTo(1_700_000_000_123L);
  }

  @Test
  void replacesTheFileAndLeavesNoTemporaryFileBehind() throws IOException {
    Path file = dir.resolve("snapshot.bin");
    SnapshotFile.write(file, new byte[] {1, 2, 3}, 1);

    SnapshotFile.write(file, SNAPSHOT, 2);

    assertThat(SnapshotFile.read(file).snapshot()).isEqualTo(SNAPSHOT);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(file);
    }
  }

  @Test
  void rejectsATruncatedFile() throws IOException {
    Path file = dir.resolve("snapshot.bin");
    SnapshotFile.write(file, SNAPSHOT, 5);
    byte[] all = Files.readAllBytes(file);
    for (int length : new int[] {0, 3, 19, 23, all.length - 1}) {
      Files.write(file, Arrays.copyOf(all, length));
      assertThatThrownBy(() -> SnapshotFile.read(file)).as("%d of %d bytes", length, all.length)
          .isInstanceOf(SnapshotFile.CorruptFileException.class)
          .hasMessageContaining(file.toString()).hasMessageContaining("truncated");
    }
  }

  @Test
  void rejectsAFileWithAnAlteredPublishTime() throws IOException {
    Path file = dir.resolve("snapshot.bin");
    SnapshotFile.write(file, SNAPSHOT, 5);
    byte[] all = Files.readAllBytes(file);
    all[15] ^= 1; // the last byte of the publish time, which the snapshot's signature does not cover
    Files.write(file, all);

    assertThatThrownBy(() -> SnapshotFile.read(file)).isInstanceOf(SnapshotFile.CorruptFileException.class)
        .hasMessageContaining("CRC-32C");
  }

  @Test
  void rejectsAFileThatIsNotASnapshotFile() throws IOException {
    Path file = dir.resolve("snapshot.bin");
    Files.write(file, ByteBuffer.allocate(64).putInt(0xCAFEBABE).array());

    assertThatThrownBy(() -> SnapshotFile.read(file)).isInstanceOf(SnapshotFile.CorruptFileException.class)
        .hasMessageContaining("cafebabe").hasMessageContaining("not a ringshift cold-start file");
  }

  @Test
  void rejectsAnotherFormatVersion() throws IOException {
    Path file = dir.resolve("snapshot.bin");
    SnapshotFile.write(file, SNAPSHOT, 5);
    byte[] all = Files.readAllBytes(file);
    all[7] = 2;
    Files.write(file, all);

    assertThatThrownBy(() -> SnapshotFile.read(file)).isInstanceOf(SnapshotFile.CorruptFileException.class)
        .hasMessageContaining("format version 2");
  }
}
