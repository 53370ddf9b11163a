package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.internal.CanonicalEncoding;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Pins placement and the checksum format across releases with committed golden files
 * ({@code ring/src/test/resources/golden/}, format in {@link GoldenRing}). Each ring is rebuilt only from
 * what its file says (members and parameters), and must reproduce the file's checksum and the position and
 * all R replicas of each of its 1,000 keys. A failure means placement or the canonical encoding changed: every
 * client and every stored snapshot would disagree with the new code.
 *
 * <p>Regenerate only on purpose, when the format is meant to change: bump {@link CanonicalEncoding#FORMAT} or
 * {@link RingSnapshot#POLICY_ID} (a new format is a full repartition and must be announced), then run
 * {@code ./mvnw -B -pl ring test -Dtest=GoldenRingTest -Dringshift.golden.regenerate=true}, review
 * {@code git diff ring/src/test/resources/golden}, and commit the files with the reason. Never regenerate to
 * make a red build green.
 */
class GoldenRingTest {

  @BeforeAll
  static void regenerateWhenAskedTo() throws IOException {
    if (Boolean.getBoolean("ringshift.golden.regenerate")) {
      GoldenRing.write(GoldenRing.SOURCE_DIRECTORY);
    }
  }

  @ParameterizedTest
  @EnumSource(GoldenRing.Case.class)
  void shouldReproduceTheGoldenRingFromItsFileAlone(GoldenRing.Case golden) throws IOException {
    GoldenRing.Parsed file = GoldenRing.parse(read(golden));
    Map<String, String> p = file.params();
    assertThat(p.get("format")).isEqualTo(CanonicalEncoding.FORMAT);
    assertThat(p.get("hash")).isEqualTo(RingHash.xxh3().id());
    assertThat(p.get("policy")).isEqualTo(RingSnapshot.POLICY_ID);

    RingSnapshot ring = RingSnapshot.builder()
        .clusterId(p.get("cluster"))
        .epoch(Long.parseLong(p.get("epoch")))
        .vnodes(Integer.parseInt(p.get("vnodes")))
        .replicas(Integer.parseInt(p.get("replicas")))
        .members(file.members())
        .build();

    assertThat(ring.checksumHex()).as("checksum of %s", golden.fileName).isEqualTo(file.checksum());
    assertThat(file.keys()).hasSize(GoldenRing.KEYS);
    for (String[] key : file.keys()) {
      assertThat(GoldenRing.hex(ring.position(key[0]))).as("position of key \"%s\"", key[0]).isEqualTo(key[1]);
      assertThat(String.join(",", ring.replicasOf(key[0]).ids())).as("replicas of key \"%s\"", key[0])
          .isEqualTo(key[2]);
      assertThat(key[2].split(",")).hasSize(Math.min(ring.replicas(), ring.memberCount()));
    }
  }

  @ParameterizedTest
  @EnumSource(GoldenRing.Case.class)
  void shouldRegenerateTheSameFileFromTheGoldenDefinition(GoldenRing.Case golden) throws IOException {
    // Guards the regeneration path: rerunning it without a format change must not rewrite a single byte.
    assertThat(GoldenRing.render(golden.build(), GoldenRing.keys())).isEqualTo(read(golden));
  }

  @ParameterizedTest
  @EnumSource(GoldenRing.Case.class)
  void shouldCoverTheHashVectorsAndNonAsciiKeys(GoldenRing.Case golden) throws IOException {
    List<String[]> keys = GoldenRing.parse(read(golden)).keys();

    assertThat(keys).anySatisfy(k -> assertThat(k).containsExactly("", "2D06800538D394C2", k[2]));
    assertThat(keys).anySatisfy(k -> assertThat(k[0]).isEqualTo("\uD83D\uDD11"));
  }

  private static String read(GoldenRing.Case golden) throws IOException {
    if (Boolean.getBoolean("ringshift.golden.regenerate")) {
      return java.nio.file.Files.readString(GoldenRing.SOURCE_DIRECTORY.resolve(golden.fileName));
    }
    try (InputStream in = GoldenRingTest.class.getResourceAsStream("/golden/" + golden.fileName)) {
      assertThat(in).as("golden file %s on the test classpath", golden.fileName).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
