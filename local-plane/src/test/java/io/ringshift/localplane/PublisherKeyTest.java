package io.ringshift.localplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publisher key of a plane's data directory: made once, then kept, so clients can keep trusting it. */
class PublisherKeyTest {
  @TempDir Path dir;

  @Test
  void shouldMakeTheKeyOnTheFirstStartAndKeepsItAfterwards() throws Exception {
    SigningKey first = LocalControlPlane.publisherKey(dir);

    assertThat(SigningKey.read(dir.resolve("publisher.key")).id()).isEqualTo(first.id());
    assertThat(TrustedKeys.read(List.of(dir.resolve("publisher.pub"))).ids()).containsExactly(first.id());
    assertThat(LocalControlPlane.publisherKey(dir).id()).isEqualTo(first.id());
  }

  @Test
  void shouldWriteTheMissingPublicKeyFileOfAKeptKey() throws Exception {
    SigningKey first = LocalControlPlane.publisherKey(dir);
    Files.delete(dir.resolve("publisher.pub"));

    assertThat(LocalControlPlane.publisherKey(dir).id()).isEqualTo(first.id());
    assertThat(TrustedKeys.read(List.of(dir.resolve("publisher.pub"))).ids()).containsExactly(first.id());
  }

  @Test
  void rejectsAKeyFileThatIsNotAKeyNamingItAndTheWayOut() throws Exception {
    Path key = Files.writeString(dir.resolve("publisher.key"), "garbage\n");

    assertThatThrownBy(() -> LocalControlPlane.publisherKey(dir)).isInstanceOfSatisfying(LocalPlaneException.class,
        e -> assertThat(e.reason()).isEqualTo(LocalPlaneException.Reason.BAD_KEY_FILE))
        .hasMessage("key file " + key + " holds no PEM block (-----BEGIN ...-----); it is the publisher's key of "
            + "this dev directory: restore it, or delete " + key + " and " + dir.resolve("publisher.pub")
            + " to make a new one (clients then trust the new publisher.pub)");
  }
}
