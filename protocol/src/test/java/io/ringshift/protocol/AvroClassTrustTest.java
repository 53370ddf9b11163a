package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.Member;
import io.ringshift.protocol.internal.AvroClassTrust;
import org.apache.avro.util.ClassSecurityValidator;
import org.junit.jupiter.api.Test;

class AvroClassTrustTest {
  @Test
  void shouldDecodeWithoutTheSerializablePackagesProperty() {
    assertThat(System.getProperty("org.apache.avro.SERIALIZABLE_PACKAGES")).isNull();
    RingSnapshotCodec codec = new RingSnapshotCodec();

    assertThat(codec.decode(codec.encode(Rings.varied())).memberCount()).isEqualTo(10);
    assertThat(AvroClassTrust.isInstalled()).isTrue();
  }

  @Test
  void shouldTrustOnlyTheGeneratedPackage() {
    new RingSnapshotCodec();

    assertThat(ClassSecurityValidator.getGlobal().isTrusted(io.ringshift.schemas.avro.RingMemberState.class)).isTrue();
    assertThat(ClassSecurityValidator.getGlobal().isTrusted(Member.class)).isFalse();
    assertThat(ClassSecurityValidator.getGlobal().isTrusted(java.io.File.class)).isFalse();
  }

  /** Without the installed trust Avro 1.12.2 refuses our classes; the message must say what to fix. */
  @Test
  void shouldExplainWhenTheApplicationReplacedTheValidator() {
    byte[] bytes = new RingSnapshotCodec().encode(Rings.varied());
    ClassSecurityValidator.ClassSecurityPredicate installed = ClassSecurityValidator.getGlobal();
    ClassSecurityValidator.setGlobal(ClassSecurityValidator.DEFAULT);
    try {
      RingSnapshotCodec fresh = new RingSnapshotCodec(
          AvroSerde.singleObject(io.ringshift.schemas.avro.RingSnapshot.class, java.util.List.of()));

      assertThatThrownBy(() -> fresh.decode(bytes))
          .isInstanceOf(CodecException.class)
          .hasMessageContaining("no longer trusts io.ringshift.schemas.avro");
    } finally {
      ClassSecurityValidator.setGlobal(installed);
    }
  }
}
