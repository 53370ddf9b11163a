package io.ringshift.cli.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.worker.Limits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --limits-file}: what it sets, what it refuses, and when it counts as changed. */
class LimitsFileTest {
  private static final Limits BASE = new Limits(100L << 20, 40L << 20, 8, 2, 2);

  @TempDir Path dir;

  @Test
  void shouldSetTheKeysItHasAndKeepTheCommandLineForTheOthers() {
    Limits limits = LimitsFile.parse("# slower during business hours\nbytes-per-second = 20MiB\nmax-tasks=3\n",
        BASE, "f");
    assertThat(limits).isEqualTo(new Limits(20L << 20, 40L << 20, 3, 2, 2));
    assertThat(LimitsFile.parse("", BASE, "f")).isEqualTo(BASE);
    assertThat(LimitsFile.parse("per-source-bytes-per-second=0", BASE, "f").perSourceBytesPerSecond()).isZero();
  }

  @Test
  void shouldRefuseABadFileNamingTheKeyAndTheRule() {
    assertThatThrownBy(() -> LimitsFile.parse("bytes-per-second=fast", BASE, "f"))
        .isInstanceOf(BadInputException.class)
        .hasMessageStartingWith("--limits-file f: bytes-per-second: 'fast' is not a byte size");
    assertThatThrownBy(() -> LimitsFile.parse("max-tasks=0", BASE, "f"))
        .hasMessage("--limits-file f: max-tasks was 0; it must be at least 1");
    assertThatThrownBy(() -> LimitsFile.parse("max-tasks-per-target=two", BASE, "f"))
        .hasMessage("--limits-file f: max-tasks-per-target was 'two'; it must be a whole number of tasks, at least 1");
    assertThatThrownBy(() -> LimitsFile.parse("bytes_per_second=1MiB", BASE, "f"))
        .hasMessageStartingWith("--limits-file f: unknown key bytes_per_second; the keys are [bytes-per-second,");
  }

  @Test
  void shouldSeeAChangeOnlyWhenTheContentChanged() throws Exception {
    Path path = Fixtures.write(dir.resolve("limits.properties"), "bytes-per-second=20MiB\n");
    LimitsFile file = new LimitsFile(path, BASE);
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
    assertThatThrownBy(file::changed).isInstanceOf(BadInputException.class)
        .hasMessageContaining("bytes-per-second");
  }

  @Test
  void shouldRefuseToStartWithABadOrMissingFile() {
    Path bad = Fixtures.write(dir.resolve("bad.properties"), "max-tasks=0\n");
    Cli.Result r = Cli.run("worker", "--node", "n=h:1", "--limits-file", bad.toString(), "--bootstrap",
        "127.0.0.1:9", "--timeout", "1");
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --limits-file " + bad + ": max-tasks was 0; it must be at least 1\n");
    Cli.Result missing = Cli.run("worker", "--node", "n=h:1", "--limits-file", dir.resolve("none").toString(),
        "--bootstrap", "127.0.0.1:9", "--timeout", "1");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.stderr()).startsWith("ringshift: --limits-file " + dir.resolve("none") + " cannot be read");
  }
}
