package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dev directory whose publisher key file is broken is refused before anything starts. */
class DevPublisherKeyTest {
  @TempDir Path dir;

  @Test
  void shouldExitWithTwoBeforeStartingAnythingWhenTheKeyFileIsBad() {
    Fixtures.write(dir.resolve("publisher.key"), "garbage\n");

    Cli.Result r = Cli.run("dev", "--port", "0", "--data-dir", dir.toString());

    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: key file " + dir.resolve("publisher.key") + " holds no PEM block");
    assertThat(dir.resolve("kafka")).doesNotExist();
  }
}
