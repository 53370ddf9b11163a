package io.ringshift.checks;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.ringshift.cli.archfixture.StartsNode;
import io.ringshift.cli.archfixture.UsesFutureInternals;
import io.ringshift.client.archfixture.UsesRingInternals;
import io.ringshift.futuremodule.internal.FutureInternal;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.archfixture.UsesProtocol;
import io.ringshift.schemas.avro.archfixture.UsesProtocolInternals;
import io.ringshift.storage.archfixture.ProducesRecords;
import io.ringshift.storage.archfixture.ReadsPublisher;
import io.ringshift.storage.archfixture.RunsStreams;
import io.ringshift.worker.archfixture.ReadsOrchestrator;
import org.junit.jupiter.api.Test;

/**
 * Each rule of {@link ArchitectureTest} fails on a deliberate violation: the fixtures under
 * {@code io.ringshift.<module>.archfixture} sit in packages that look like modules, and each test imports only the
 * fixtures it names, so a rule that silently stopped matching (a renamed package, a wrong pattern) fails here
 * instead of passing over the real tree.
 */
class ArchitectureRulesTest {

  @Test
  void rejectsAClassThatUsesAnotherModulesInternals() {
    assertRejects(ArchitectureTest.NO_MODULE_USES_ANOTHER_MODULES_INTERNALS, ArchitectureTest.BECAUSE_INTERNALS,
        importOnly(UsesRingInternals.class), UsesRingInternals.class.getName(),
        "io.ringshift.ring.internal.TokenTable");
  }

  @Test
  void rejectsTheUseOfInternalsOfAModuleTheRulesDoNotName() {
    assertRejects(ArchitectureTest.NO_MODULE_USES_ANOTHER_MODULES_INTERNALS, ArchitectureTest.BECAUSE_INTERNALS,
        importOnly(UsesFutureInternals.class, FutureInternal.class), UsesFutureInternals.class.getName(),
        "module futuremodule");
  }

  @Test
  void shouldLetTheAvroNamespaceUseProtocolInternalsAsPartOfProtocol() {
    EvaluationResult result = ArchitectureTest.NO_MODULE_USES_ANOTHER_MODULES_INTERNALS
        .evaluate(importOnly(UsesProtocolInternals.class));
    assertThat(result.hasViolation()).as(result.getFailureReport().toString()).isFalse();
  }

  @Test
  void rejectsARoleThatDependsOnAnotherRole() {
    assertRejects(ArchitectureTest.ROLES_DO_NOT_DEPEND_ON_ROLES, ArchitectureTest.BECAUSE_ROLES,
        importOnly(ReadsOrchestrator.class), ReadsOrchestrator.class.getName(),
        "role migration-worker depends on role orchestrator");
  }

  @Test
  void rejectsStorageDependingOnARole() {
    assertRejects(ArchitectureTest.ROLE_FREE_LIBRARIES_DEPEND_ON_NO_ROLE, ArchitectureTest.BECAUSE_LIBRARIES,
        importOnly(ReadsPublisher.class), ReadsPublisher.class.getName(), "io.ringshift.publisher.SnapshotPublisher");
  }

  @Test
  void rejectsTheStorageServerSideOutsideTheCliButNotInIt() {
    String report = assertRejects(ArchitectureTest.STORAGE_SERVER_SIDE_IS_RUN_ONLY_BY_THE_CLI,
        ArchitectureTest.BECAUSE_SERVER_SIDE,
        importOnly(io.ringshift.worker.archfixture.StartsNode.class, StartsNode.class),
        io.ringshift.worker.archfixture.StartsNode.class.getName(), "io.ringshift.storage.NodeServer",
        "io.ringshift.storage.RocksStore");
    assertThat(report).doesNotContain(StartsNode.class.getName());
  }

  @Test
  void rejectsRingDependingOnAnotherModule() {
    assertRejects(ArchitectureTest.RING_DEPENDS_ON_NO_OTHER_MODULE, ArchitectureTest.BECAUSE_RING,
        importOnly(UsesProtocol.class), UsesProtocol.class.getName(), "io.ringshift.protocol.CodecException");
  }

  @Test
  void rejectsKafkaStreamsInStorage() {
    assertRejects(ArchitectureTest.STORAGE_AND_CLIENT_DO_NOT_USE_KAFKA_STREAMS, ArchitectureTest.BECAUSE_STREAMS,
        importOnly(RunsStreams.class), RunsStreams.class.getName(), "org.apache.kafka.streams.KafkaStreams");
  }

  @Test
  void rejectsKafkaStreamsInTheClient() {
    assertRejects(ArchitectureTest.STORAGE_AND_CLIENT_DO_NOT_USE_KAFKA_STREAMS, ArchitectureTest.BECAUSE_STREAMS,
        importOnly(io.ringshift.client.archfixture.RunsStreams.class),
        io.ringshift.client.archfixture.RunsStreams.class.getName(), "org.apache.kafka.streams.KafkaStreams");
  }

  @Test
  void rejectsPlainKafkaInStorage() {
    assertRejects(ArchitectureTest.STORAGE_DOES_NOT_USE_KAFKA, ArchitectureTest.BECAUSE_STORAGE_KAFKA,
        importOnly(ProducesRecords.class), ProducesRecords.class.getName(),
        "org.apache.kafka.clients.producer.Producer");
  }

  @Test
  void rejectsOneTopLevelSimpleNameInTwoModules() {
    assertRejects(ArchitectureTest.NO_SIMPLE_NAME_IN_TWO_MODULES, ArchitectureTest.BECAUSE_NAMES,
        importOnly(io.ringshift.orchestrator.archfixture.Progress.class,
            io.ringshift.worker.archfixture.Progress.class),
        "top-level type Progress is in modules [migration-worker, orchestrator]",
        io.ringshift.orchestrator.archfixture.Progress.class.getName(),
        io.ringshift.worker.archfixture.Progress.class.getName());
  }

  @Test
  void shouldNotCountGeneratedAvroClassesAsNameClashes() {
    EvaluationResult result = ArchitectureTest.NO_SIMPLE_NAME_IN_TWO_MODULES
        .evaluate(importOnly(RingSnapshot.class, io.ringshift.schemas.avro.RingSnapshot.class));
    assertThat(result.hasViolation()).as(result.getFailureReport().toString()).isFalse();
  }

  @Test
  void shouldReportANameClashOnlyOnceWhenTheRuleIsEvaluatedAgain() {
    // The condition keeps the names it saw between check and finish; a second evaluation must not inherit them.
    JavaClasses clash = importOnly(io.ringshift.orchestrator.archfixture.Progress.class,
        io.ringshift.worker.archfixture.Progress.class);
    ArchitectureTest.NO_SIMPLE_NAME_IN_TWO_MODULES.evaluate(clash);
    assertThat(ArchitectureTest.NO_SIMPLE_NAME_IN_TWO_MODULES.evaluate(clash).getFailureReport().getDetails())
        .hasSize(1);
    assertThat(ArchitectureTest.NO_SIMPLE_NAME_IN_TWO_MODULES
        .evaluate(importOnly(io.ringshift.worker.archfixture.Progress.class)).hasViolation()).isFalse();
  }

  private static JavaClasses importOnly(Class<?>... fixtures) {
    return new ClassFileImporter().importClasses(fixtures);
  }

  /** Asserts the rule fails on the classes with its {@code because} text and the given details; returns the report. */
  private static String assertRejects(ArchRule rule, String because, JavaClasses classes, String... details) {
    EvaluationResult result = rule.evaluate(classes);
    assertThat(result.hasViolation()).as("%s on %s", rule.getDescription(), classes).isTrue();
    String report = result.getFailureReport().toString();
    assertThat(report).contains("because " + because).contains(details);
    return report;
  }
}
