package io.ringshift.cli.internal.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.protocol.SigningKey;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ringshift publisher} input checks: each refused with exit code 2 and a message naming the option. */
class PublisherCommandTest {
  @TempDir Path dir;

  @Test
  void shouldNameAMissingKeyFileAndHowToMakeOne() {
    Path missing = dir.resolve("publisher.key");

    Cli.Result r = Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", missing.toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --signing-key: " + missing + " does not exist; make one with "
        + "'ringshift keygen --out " + missing + "'\n");
  }

  @Test
  void rejectsAPublicKeyFileForTheSigningKey() throws Exception {
    Path key = dir.resolve("publisher.key");
    SigningKey.generate().write(key, dir.resolve("publisher.pub"));

    Cli.Result r = Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key",
        dir.resolve("publisher.pub").toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: --signing-key: signing key file " + dir.resolve("publisher.pub")
        + " must hold a PRIVATE KEY and a PUBLIC KEY PEM block");
  }

  @Test
  void rejectsAFileThatIsNotPem() {
    Path junk = Fixtures.write(dir.resolve("junk.key"), "not a key\n");

    Cli.Result r = Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", junk.toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --signing-key: key file " + junk + " holds no PEM block "
        + "(-----BEGIN ...-----)\n");
  }

  @Test
  void rejectsAPreviousKeyThatIsNotAPublicKey() throws Exception {
    Path key = dir.resolve("publisher.key");
    SigningKey.generate().write(key, dir.resolve("publisher.pub"));
    Path junk = dir.resolve("old.pub");
    java.nio.file.Files.writeString(junk, "not a key");

    Cli.Result r = Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", key.toString(),
        "--previous-key", junk.toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: --previous-key: key file " + junk + " holds no PEM block");
  }

  @Test
  void rejectsBadTopicCreationSettings() throws Exception {
    Path key = dir.resolve("publisher.key");
    SigningKey.generate().write(key, dir.resolve("publisher.pub"));

    assertThat(Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", key.toString(),
        "--partitions", "0").stderr()).isEqualTo("ringshift: --partitions was 0; it must be at least 1\n");
    assertThat(Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", key.toString(),
        "--replication-factor", "0").stderr())
        .isEqualTo("ringshift: --replication-factor was 0; give auto or a number from 1 to 32767\n");
    assertThat(Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--signing-key", key.toString(),
        "--replication-factor", "three").stderr())
        .isEqualTo("ringshift: --replication-factor was three; give auto or a number from 1 to 32767\n");
  }

  @Test
  void shouldSayWhenKafkaCannotBeReached() throws Exception {
    Path key = dir.resolve("publisher.key");
    SigningKey.generate().write(key, dir.resolve("publisher.pub"));

    Cli.Result r = Cli.run("publisher", "--bootstrap", "127.0.0.1:9", "--timeout", "1", "--signing-key",
        key.toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: the publisher could not start against Kafka at 127.0.0.1:9: ");
  }
}
