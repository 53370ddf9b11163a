package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {
  @TempDir Path dir;

  @Test
  void shouldWriteAndReplaceAFileLeavingNoTemporaryFile() throws IOException {
    Path file = dir.resolve("sub").resolve("snapshot.bin");

    AtomicFiles.write(file, new byte[] {1, 2, 3}, false);
    AtomicFiles.write(file, new byte[] {4}, false);

    assertThat(Files.readAllBytes(file)).containsExactly(4);
    try (var left = Files.list(file.getParent())) {
      assertThat(left).containsExactly(file);
    }
  }

  @Test
  void shouldMakeASecretReadableByItsOwnerOnly() throws IOException {
    Path key = dir.resolve("publisher.key");

    AtomicFiles.write(key, new byte[] {7}, true);

    if (key.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      assertThat(Files.getPosixFilePermissions(key))
          .isEqualTo(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
    }
  }

  @Test
  void shouldLeaveTheTargetAndNoTemporaryFileWhenTheMoveFails() throws IOException {
    Path target = Files.createDirectories(dir.resolve("a-directory"));
    Files.writeString(target.resolve("inside"), "x");

    assertThatThrownBy(() -> AtomicFiles.write(target, new byte[] {1}, false)).isInstanceOf(IOException.class);

    try (var left = Files.list(dir)) {
      assertThat(left).containsExactly(target);
    }
    assertThat(target.resolve("inside")).hasContent("x");
  }
}
