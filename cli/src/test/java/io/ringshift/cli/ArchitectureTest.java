package io.ringshift.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Module boundaries: each module ({@code io.ringshift.<module>}) keeps an {@code internal} package that only its
 * own classes may use. The CLI's test class path holds the ring, schemas and cli modules, so the rules check
 * all three (and any later module on that path).
 */
class ArchitectureTest {
  private static final Pattern INTERNAL = Pattern.compile("io\\.ringshift\\.([^.]+)\\.internal(\\..*)?");

  private static final JavaClasses CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.ringshift");

  @Test
  void shouldImportEveryModuleOnTheClassPath() {
    assertThat(CLASSES.stream().map(JavaClass::getPackageName).map(ArchitectureTest::moduleOf).distinct())
        .contains("ring", "protocol", "cli");
  }

  @Test
  void noClassOutsideTheRingModuleUsesRingInternals() {
    noClasses().that().resideOutsideOfPackage("io.ringshift.ring..")
        .should().dependOnClassesThat().resideInAPackage("io.ringshift.ring.internal..")
        .because("io.ringshift.ring.internal is the ring's implementation; use the public API in "
            + "io.ringshift.ring (RingSnapshot, RingBuilder, ReplicaSet, RingDiff) or add what you need there")
        .check(CLASSES);
  }

  @Test
  void noClassOutsideTheSchemasModuleUsesSchemasInternals() {
    noClasses().that().resideOutsideOfPackage("io.ringshift.protocol..")
        .should().dependOnClassesThat().resideInAPackage("io.ringshift.protocol.internal..")
        .because("io.ringshift.protocol.internal is the codecs' implementation; use RingSnapshotCodec, AvroSerde "
            + "and CodecException in io.ringshift.protocol, or add what you need there")
        .check(CLASSES);
  }

  @Test
  void noClassOutsideTheCliModuleUsesCliInternals() {
    noClasses().that().resideOutsideOfPackage("io.ringshift.cli..")
        .should().dependOnClassesThat().resideInAPackage("io.ringshift.cli.internal..")
        .because("commands in io.ringshift.cli.internal are not an API; run them through Ringshift.run or move "
            + "shared logic into a library module")
        .check(CLASSES);
  }

  /** The same rule for every module, including ones added later, keyed on the third package segment. */
  @Test
  void noModuleUsesAnotherModulesInternals() {
    classes().should(onlyUseTheirOwnModulesInternals())
        .because("a module's internal package may change without notice; depend on that module's public "
            + "packages instead, or move the type you need into one")
        .check(CLASSES);
  }

  private static ArchCondition<JavaClass> onlyUseTheirOwnModulesInternals() {
    return new ArchCondition<>("only use the internal packages of their own module") {
      @Override
      public void check(JavaClass item, ConditionEvents events) {
        String module = moduleOf(item.getPackageName());
        for (Dependency dependency : item.getDirectDependenciesFromSelf()) {
          Matcher internal = INTERNAL.matcher(dependency.getTargetClass().getPackageName());
          if (internal.matches() && !internal.group(1).equals(module)) {
            events.add(SimpleConditionEvent.violated(dependency, dependency.getDescription()));
          }
        }
      }
    };
  }

  private static String moduleOf(String packageName) {
    String[] parts = packageName.split("\\.");
    return parts.length >= 3 && parts[0].equals("io") && parts[1].equals("ringshift") ? parts[2] : "";
  }
}
