package io.ringshift.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A worker's limits file: what it sets, what it refuses, and when it counts as changed. */
class LimitsFileTest {
  private static final Limits BASE = new Limits(100L << 20, 40L << 20, 8, 2, 2);

  @TempDir Path dir;

  @Test
  void shouldSetTheKeysItHasAndKeepTheCommandLineForTheOthers() {
    Limits limits = LimitsFile.parse("# slower during business hours\nbytes-per-second = 20MiB\nmax-tasks=3\n",
        BASE, "--limits-file f");
    assertThat(limits).isEqualTo(new Limits(20L << 20, 40L << 20, 3, 2, 2));
    assertThat(LimitsFile.parse("", BASE, "--limits-file f")).isEqualTo(BASE);
    assertThat(LimitsFile.parse("per-source-bytes-per-second=0", BASE, "--limits-file f").perSourceBytesPerSecond()).isZero();
  }

  @Test
  void shouldRefuseABadFileNamingTheKeyAndTheRule() {
    assertThatThrownBy(() -> LimitsFile.parse("bytes-per-second=fast", BASE, "--limits-file f"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--limits-file f: bytes-per-second: 'fast' is not a byte size");
    assertThatThrownBy(() -> LimitsFile.parse("max-tasks=0", BASE, "--limits-file f"))
        .hasMessage("--limits-file f: max-tasks was 0; it must be at least 1");
    assertThatThrownBy(() -> LimitsFile.parse("max-tasks-per-target=two", BASE, "--limits-file f"))
        .hasMessage("--limits-file f: max-tasks-per-target was 'two'; it must be a whole number of tasks, at least 1");
    assertThatThrownBy(() -> LimitsFile.parse("bytes_per_second=1MiB", BASE, "--limits-file f"))
        .hasMessageStartingWith("--limits-file f: unknown key bytes_per_second; the keys are [bytes-per-second,");
  }

  @Test
  void shouldSeeAChangeOnlyWhenTheContentChanged() throws Exception {
    Path path = Files.writeString(dir.resolve("limits.properties"), "bytes-per-second=20MiB\n");
    LimitsFile file = new LimitsFile(path, BASE, "--limits-file");
    assertThat(file.read().bytesPerSecond()).isEqualTo(20L << 20);
    assertThat(file.changed()).as("nothing changed").isNull();

    Files.setLastModifiedTime(path, FileTime.fromMillis(Files.getLastModifiedTime(path).toMillis() + 5000));
    assertThat(file.changed()).as("touched, same content").isNull();

    Files.writeString(path, "bytes-per-second=5MiB\n");
    Files.setLastModifiedTime(path, FileTime.fromMillis(Files.getLastModifiedTime(path).toMillis() + 10_000));
    assertThat(file.changed()).isEqualTo(BASE.withRates(5L << 20, 40L << 20));
    assertThat(file.changed()).as("seen").isNull();

    Files.writeString(path, "bytes-per-second=-1\n");
    Files.setLastModifiedTime(path, FileTime.fromMillis(Files.getLastModifiedTime(path).toMillis() + 20_000));
    assertThatThrownBy(file::changed).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bytes-per-second");
  }
}
