package io.ringshift.cli.internal.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeygenCommandTest {
  @TempDir Path dir;

  @Test
  void shouldWriteAKeyFileOnlyItsOwnerReadsAndAPublicKeyFileClientsTrust() throws Exception {
    Path out = dir.resolve("publisher.key");

    Cli.Result r = Cli.run("keygen", "--out", out.toString());

    assertThat(r.exitCode()).as(r.toString()).isZero();
    SigningKey key = SigningKey.read(out);
    assertThat(TrustedKeys.read(List.of(dir.resolve("publisher.key.pub"))).ids()).containsExactly(key.id());
    assertThat(Files.readString(dir.resolve("publisher.key.pub"))).doesNotContain("PRIVATE");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(out))).isEqualTo("rw-------");
    assertThat(r.stdout()).isEqualTo("ringshift keygen: key " + key.id() + "\n"
        + "  signing key: " + out + " (keep it secret; ringshift publisher --signing-key " + out + ")\n"
        + "  public key:  " + out + ".pub (give it to clients: they trust snapshots signed by it)\n");
  }

  @Test
  void rejectsReplacingAnExistingKeyUnlessForced() throws Exception {
    Path out = dir.resolve("publisher.key");
    assertThat(Cli.run("keygen", "--out", out.toString()).exitCode()).isZero();
    String first = SigningKey.read(out).id();

    Cli.Result refused = Cli.run("keygen", "--out", out.toString());

    assertThat(refused.exitCode()).isEqualTo(2);
    assertThat(refused.stderr()).isEqualTo("ringshift: --out " + out + ": " + out + " exists; a key that clients "
        + "trust must not be replaced by accident (give another name, or --force to overwrite it)\n");
    assertThat(SigningKey.read(out).id()).isEqualTo(first);

    assertThat(Cli.run("keygen", "--out", out.toString(), "--force").exitCode()).isZero();
    assertThat(SigningKey.read(out).id()).isNotEqualTo(first);
  }

  @Test
  void rejectsADirectoryThatDoesNotExist() {
    Path out = dir.resolve("missing").resolve("publisher.key");

    Cli.Result r = Cli.run("keygen", "--out", out.toString());

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --out " + out + ": directory " + dir.resolve("missing")
        + " does not exist; create it first\n");
  }
}
