package io.ringshift.cli.internal.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.protocol.SigningKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Input {@code ringshift audit} refuses before it connects: exit 2, one line naming the problem, nothing on stdout.
 * Nothing listens at the bootstrap address, so a command that connected anyway would fail differently.
 */
class AuditCommandTest {
  private static final String[] NOWHERE = {"--bootstrap", "127.0.0.1:1", "--timeout", "5"};

  @TempDir static Path dir;

  @BeforeAll
  static void writeKeys() throws Exception {
    SigningKey.generate().write(dir.resolve("publisher.key"), dir.resolve("publisher.pub"));
    Fixtures.write(dir.resolve("not-a-key.pem"), "hello\n");
  }

  record Case(String name, List<String> args, String expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        c("no trusted key", "--trusted-key was missing; audit verifies every signature against the publisher's "
            + "public keys"),
        c("missing key file", "trusted key file {d}/none.pub does not exist", "--trusted-key", "{d}/none.pub"),
        c("key file is a directory", "trusted key file {d} is a directory", "--trusted-key", "{d}"),
        c("not a key", "key file {d}/not-a-key.pem holds no PEM block", "--trusted-key", "{d}/not-a-key.pem"),
        c("second key file missing", "trusted key file {d}/none.pub does not exist", "--trusted-key",
            "{d}/publisher.pub", "--trusted-key", "{d}/none.pub"),
        c("vnodes without what-if", "--vnodes was given without --what-if", "--trusted-key", "{d}/publisher.pub",
            "--vnodes", "64"),
        c("what-if without vnodes", "--what-if needs --vnodes V", "--what-if"),
        c("what-if vnodes 0", "--vnodes was 0; it must be at least 1", "--what-if", "--vnodes", "0"),
        c("what-if unknown policy", "--policy: placement policy was \"greedy\"; it must be hashed or balanced",
            "--what-if", "--vnodes", "8", "--policy", "greedy"),
        c("policy without what-if", "--policy was given without --what-if", "--trusted-key", "{d}/publisher.pub",
            "--policy", "balanced"),
        c("what-if replicas 65", "--replicas was 65; it must be between 1 and 64", "--what-if", "--vnodes", "8",
            "--replicas", "65"),
        c("blank cluster", "--cluster was \" \"; a cluster id must not be blank", "--cluster", " ",
            "--trusted-key", "{d}/publisher.pub"));
  }

  private static Case c(String name, String expected, String... args) {
    return new Case(name, List.of(args), expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void rejectsBadInputBeforeConnecting(Case c) {
    List<String> args = new ArrayList<>(List.of("audit"));
    args.addAll(List.of(NOWHERE));
    c.args().forEach(a -> args.add(a.replace("{d}", dir.toString())));

    Cli.Result result = Cli.run(args.toArray(String[]::new));

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stdout()).isEmpty();
    assertThat(result.stderr()).startsWith("ringshift: ").contains(c.expected().replace("{d}", dir.toString()))
        .endsWith("\n");
    assertThat(result.stderr().lines()).hasSize(1);
  }
}
