package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publisher key of a dev directory: made once, then kept, so clients can keep trusting it. */
class DevPublisherKeyTest {
  @TempDir Path dir;

  @Test
  void makesTheKeyOnTheFirstStartAndKeepsItAfterwards() throws Exception {
    SigningKey first = DevControlPlane.publisherKey(dir);

    assertThat(SigningKey.read(dir.resolve("publisher.key")).id()).isEqualTo(first.id());
    assertThat(TrustedKeys.read(List.of(dir.resolve("publisher.pub"))).ids()).containsExactly(first.id());
    assertThat(DevControlPlane.publisherKey(dir).id()).isEqualTo(first.id());
  }

  @Test
  void writesTheMissingPublicKeyFileOfAKeptKey() throws Exception {
    SigningKey first = DevControlPlane.publisherKey(dir);
    Files.delete(dir.resolve("publisher.pub"));

    assertThat(DevControlPlane.publisherKey(dir).id()).isEqualTo(first.id());
    assertThat(TrustedKeys.read(List.of(dir.resolve("publisher.pub"))).ids()).containsExactly(first.id());
  }

  @Test
  void refusesAKeyFileThatIsNotAKeyNamingItAndTheWayOut() {
    Path key = Fixtures.write(dir.resolve("publisher.key"), "garbage\n");

    assertThatThrownBy(() -> DevControlPlane.publisherKey(dir)).isInstanceOf(BadInputException.class)
        .hasMessage("key file " + key + " holds no PEM block (-----BEGIN ...-----); it is the publisher's key of "
            + "this dev directory: restore it, or delete " + key + " and " + dir.resolve("publisher.pub")
            + " to make a new one (clients then trust the new publisher.pub)");
  }

  @Test
  void devExitsWithTwoBeforeStartingAnythingWhenItsKeyFileIsBad() {
    Fixtures.write(dir.resolve("publisher.key"), "garbage\n");

    Cli.Result r = Cli.run("dev", "--port", "0", "--data-dir", dir.toString());

    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: key file " + dir.resolve("publisher.key") + " holds no PEM block");
    assertThat(dir.resolve("kafka")).doesNotExist();
  }
}
