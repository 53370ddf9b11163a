package io.ringshift.checks;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static java.util.stream.Collectors.joining;
import static java.util.stream.Collectors.toCollection;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import io.ringshift.checks.BuildLayout.ModuleId;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.OwnershipCheckedStore;
import io.ringshift.storage.RingView;
import io.ringshift.storage.RocksStore;
import io.ringshift.worker.archfixture.ReadsOrchestrator;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Architecture rules over the main classes of every module of the build (project-checks depends on each one, and
 * {@link ModuleCoverageTest} fails when a module is missing). Each rule's {@code because} says what to do about a
 * violation; {@link ArchitectureRulesTest} proves each rule fails on a deliberate one.
 *
 * <p>Only main classes are imported: test classes (every module's {@code target/test-classes}, including the
 * fixtures of this module) and test jars are left out, so tests may do what the rules forbid (start a storage node,
 * read another module's internals) and the fixtures never reach these rules.
 */
class ArchitectureTest {
  /** A module's internal package: {@code io.ringshift.<root>.internal} and below. */
  private static final Pattern INTERNAL = Pattern.compile("io\\.ringshift\\.([^.]+)\\.internal(\\..*)?");
  /** Test jars ({@code <artifact>-<version>-tests.jar}) hold test classes; the class rules are about main code. */
  private static final Pattern TEST_JAR_ENTRY = Pattern.compile(".*-tests\\.jar!/.*");

  static final ImportOption DO_NOT_INCLUDE_TEST_JARS = location -> !location.matches(TEST_JAR_ENTRY);

  static final JavaClasses MAIN_CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .withImportOption(DO_NOT_INCLUDE_TEST_JARS)
      .importPackages("io.ringshift");

  static final String BECAUSE_INTERNALS = "a module's internal package may change without notice; depend on that "
      + "module's public package (io.ringshift.<module>) instead, or move the type you need there";
  static final ArchRule NO_MODULE_USES_ANOTHER_MODULES_INTERNALS = classes()
      .should(onlyUseTheInternalPackagesOfTheirOwnModule())
      .because(BECAUSE_INTERNALS);

  static final String BECAUSE_ROLES = "roles (" + roleModules() + ") are separate processes that talk only "
      + "through the topics of protocol; move what two roles share into ring, protocol or storage's SPI instead of "
      + "importing another role";
  static final ArchRule ROLES_DO_NOT_DEPEND_ON_ROLES = classes()
      .should(notDependOnAnotherRole())
      .because(BECAUSE_ROLES);

  static final String BECAUSE_LIBRARIES = "storage is the data-plane library the roles drive stores through (Store, "
      + "RemoteStore, RoutedWriter); if it imported a role, every role would depend on that role through it. Move "
      + "the code into the role, or what both need into protocol or ring";
  static final ArchRule ROLE_FREE_LIBRARIES_DEPEND_ON_NO_ROLE = noClasses()
      .that().resideInAnyPackage(packagesOf(BuildLayout.ROLE_FREE_LIBRARIES))
      .should().dependOnClassesThat().resideInAnyPackage(packagesOf(BuildLayout.ROLES))
      .because(BECAUSE_LIBRARIES);

  /**
   * The packages that may run a storage node besides storage itself: the CLI ({@code ringshift node},
   * {@code ringshift dev}), the local plane, and the deterministic simulation (its nodes are in-memory stores behind
   * the production ownership check). A module that takes over launching nodes is added here.
   */
  static final List<String> NODE_LAUNCHERS = List.of("io.ringshift.cli", "io.ringshift.localplane",
      "io.ringshift.simulation");
  static final String BECAUSE_SERVER_SIDE = "NodeServer, RocksStore, OwnershipCheckedStore and RingView are the "
      + "storage node's server side, which only the CLI (ringshift node), the local plane (ringshift dev, the "
      + "end-to-end tests) and the protocol simulation run; other modules reach "
      + "nodes through the SPI (Store, RemoteStore, RoutedWriter), and tests start nodes in their own code";
  static final ArchRule STORAGE_SERVER_SIDE_IS_RUN_ONLY_BY_THE_CLI = noClasses()
      .that().resideOutsideOfPackages(Stream.concat(Stream.of("io.ringshift.storage"), NODE_LAUNCHERS.stream())
          .map(packageName -> packageName + "..").toArray(String[]::new))
      .should().dependOnClassesThat()
      .belongToAnyOf(NodeServer.class, RocksStore.class, OwnershipCheckedStore.class, RingView.class)
      .because(BECAUSE_SERVER_SIDE);

  static final String BECAUSE_RING = "ring is the placement library every module builds on and depends on no other "
      + "ringshift module; move the code that needs protocol, storage or a role into that module";
  static final ArchRule RING_DEPENDS_ON_NO_OTHER_MODULE = noClasses()
      .that().resideInAPackage("io.ringshift.ring..")
      .should().dependOnClassesThat(
          resideInAPackage("io.ringshift..").and(resideOutsideOfPackage("io.ringshift.ring..")))
      .because(BECAUSE_RING);

  static final String BECAUSE_STREAMS = "only the orchestrator runs Kafka Streams; storage nodes and client "
      + "processes must not pull in Streams' threads, state stores and configuration: use kafka-clients (protocol's "
      + "ReadToEnd, a consumer) or move the code into the orchestrator";
  static final ArchRule STORAGE_AND_CLIENT_DO_NOT_USE_KAFKA_STREAMS = noClasses()
      .that().resideInAnyPackage("io.ringshift.storage..", "io.ringshift.client..")
      .should().dependOnClassesThat().resideInAPackage("org.apache.kafka.streams..")
      .because(BECAUSE_STREAMS);

  static final String BECAUSE_STORAGE_KAFKA = "the storage node and its SPI do not use Kafka at all: a node learns "
      + "the ring through a RingView that its launcher (the CLI, with a RingClient) feeds; keep Kafka code in the "
      + "module that launches the node";
  static final ArchRule STORAGE_DOES_NOT_USE_KAFKA = noClasses()
      .that().resideInAPackage("io.ringshift.storage..")
      .should().dependOnClassesThat().resideInAPackage("org.apache.kafka..")
      .because(BECAUSE_STORAGE_KAFKA);

  static final String BECAUSE_NAMES = "two top-level types with one simple name in different modules (Rings, "
      + "Progress and Placement were such) make imports ambiguous and stack traces misleading; rename one after "
      + "what it does in its module";
  static final ArchRule NO_SIMPLE_NAME_IN_TWO_MODULES = classes()
      .should(haveASimpleNameThatNoOtherModuleUses())
      .because(BECAUSE_NAMES);

  @Test
  void shouldImportTheMainClassesOfEveryCheckedModuleAndNoOtherModule() {
    Set<String> expected = new TreeSet<>(BuildLayout.modulesWithMainCode(BuildLayout.repositoryRoot()));
    expected.removeAll(BuildLayout.NOT_CHECKED);
    Set<String> imported = MAIN_CLASSES.stream()
        .map(javaClass -> BuildLayout.moduleOf(javaClass.getPackageName()))
        .collect(toCollection(TreeSet::new));
    assertThat(imported)
        .as("modules whose main classes the rules see. A module missing here is not a test dependency of "
            + "project-checks (see ModuleCoverageTest); a name that is no module of this tree is a package root "
            + "(io.ringshift.<root>) that no module has under src/main/java: a stale jar of a module that is not "
            + "in this tree (install this tree first), or generated code to map in "
            + "BuildLayout.GENERATED_PACKAGE_ROOTS")
        .isEqualTo(expected);
  }

  @Test
  void shouldGiveEveryPackageRootOneModule() {
    Map<String, Set<String>> shared = new TreeMap<>(BuildLayout.packageRoots(BuildLayout.repositoryRoot()));
    shared.values().removeIf(modules -> modules.size() == 1);
    assertThat(shared)
        .as("package roots (io.ringshift.<root>) of more than one module: the rules tell modules apart by package, "
            + "so give each module its own root")
        .isEmpty();
  }

  @Test
  void shouldTreatTheAvroNamespaceAsPartOfProtocol() {
    assertThat(MAIN_CLASSES.containPackage("io.ringshift.schemas.avro"))
        .as("protocol's generated Avro classes are imported").isTrue();
    assertThat(BuildLayout.moduleOf("io.ringshift.schemas.avro")).isEqualTo("protocol");
    assertThat(BuildLayout.moduleOf("io.ringshift.worker.internal")).isEqualTo("migration-worker");
    assertThat(BuildLayout.moduleOf("io.ringshift.publisher")).isEqualTo("snapshot-publisher");
    assertThat(BuildLayout.moduleOf("org.apache.kafka.streams")).isEmpty();
  }

  @Test
  void shouldImportNeitherTestClassesNorTheFixturesOfThisModule() {
    // Without the import options the fixtures are found: it is the options that keep them out, not an accident.
    JavaClasses unfiltered = new ClassFileImporter().importPackages("io.ringshift.worker.archfixture");
    assertThat(unfiltered.contain(ReadsOrchestrator.class)).isTrue();
    assertThat(MAIN_CLASSES.contain(ReadsOrchestrator.class)).isFalse();
    List<String> testClasses = MAIN_CLASSES.stream()
        .filter(javaClass -> javaClass.getPackageName().contains(".archfixture")
            || javaClass.getPackageName().startsWith("io.ringshift.checks")
            || javaClass.getSource().map(source -> source.getUri().toString())
                .filter(uri -> uri.contains("/test-classes/") || TEST_JAR_ENTRY.matcher(uri).matches()).isPresent())
        .map(JavaClass::getName)
        .toList();
    assertThat(testClasses).as("test classes among the imported main classes").isEmpty();
  }

  @Test
  void shouldLeaveOutTheClassesOfTestJars() {
    String jar = "jar:file:/m2/io/ringshift/ringshift-migration-worker/0.1.0-SNAPSHOT/ringshift-migration-worker-"
        + "0.1.0-SNAPSHOT";
    assertThat(DO_NOT_INCLUDE_TEST_JARS.includes(Location.of(URI.create(jar + "-tests.jar!/io/ringshift/worker/"
        + "StorageNodes.class")))).isFalse();
    assertThat(DO_NOT_INCLUDE_TEST_JARS.includes(Location.of(URI.create(jar + ".jar!/io/ringshift/worker/"
        + "MigrationWorker.class")))).isTrue();
  }

  @Test
  void shouldKeepEveryModuleOutOfOtherModulesInternalPackages() {
    NO_MODULE_USES_ANOTHER_MODULES_INTERNALS.check(MAIN_CLASSES);
  }

  @Test
  void shouldKeepRolesIndependentOfEachOther() {
    ROLES_DO_NOT_DEPEND_ON_ROLES.check(MAIN_CLASSES);
  }

  @Test
  void shouldKeepTheStorageLibraryFreeOfRoles() {
    ROLE_FREE_LIBRARIES_DEPEND_ON_NO_ROLE.check(MAIN_CLASSES);
  }

  @Test
  void shouldLeaveTheStorageNodesServerSideToTheCli() {
    STORAGE_SERVER_SIDE_IS_RUN_ONLY_BY_THE_CLI.check(MAIN_CLASSES);
  }

  @Test
  void shouldKeepRingFreeOfOtherModules() {
    RING_DEPENDS_ON_NO_OTHER_MODULE.check(MAIN_CLASSES);
  }

  @Test
  void shouldKeepKafkaStreamsOutOfStorageAndClient() {
    STORAGE_AND_CLIENT_DO_NOT_USE_KAFKA_STREAMS.check(MAIN_CLASSES);
  }

  @Test
  void shouldKeepKafkaOutOfStorage() {
    STORAGE_DOES_NOT_USE_KAFKA.check(MAIN_CLASSES);
  }

  @Test
  void shouldGiveNoTwoModulesATopLevelTypeOfTheSameSimpleName() {
    NO_SIMPLE_NAME_IN_TWO_MODULES.check(MAIN_CLASSES);
  }

  private static ArchCondition<JavaClass> onlyUseTheInternalPackagesOfTheirOwnModule() {
    return new ArchCondition<>("only use the internal packages of their own module") {
      @Override
      public void check(JavaClass item, ConditionEvents events) {
        String module = BuildLayout.moduleOf(item.getPackageName());
        for (Dependency dependency : item.getDirectDependenciesFromSelf()) {
          String target = dependency.getTargetClass().getPackageName();
          Matcher internal = INTERNAL.matcher(target);
          if (internal.matches() && !BuildLayout.moduleOf(target).equals(module)) {
            events.add(SimpleConditionEvent.violated(dependency, dependency.getDescription() + " (module "
                + module + " uses the internals of module " + BuildLayout.moduleOf(target) + ")"));
          }
        }
      }
    };
  }

  private static ArchCondition<JavaClass> notDependOnAnotherRole() {
    return new ArchCondition<>("not depend on the classes of another role") {
      @Override
      public void check(JavaClass item, ConditionEvents events) {
        ModuleId own = roleOf(item.getPackageName());
        if (own == null) {
          return;
        }
        for (Dependency dependency : item.getDirectDependenciesFromSelf()) {
          ModuleId target = roleOf(dependency.getTargetClass().getPackageName());
          if (target != null && !target.equals(own)) {
            events.add(SimpleConditionEvent.violated(dependency, dependency.getDescription() + " (role "
                + own.module() + " depends on role " + target.module() + ")"));
          }
        }
      }
    };
  }

  /**
   * Groups the top-level types (which leaves out nested, local and anonymous classes) by simple name and reports
   * every name found in more than one module. Generated Avro classes and package-info do not count: Avro names its
   * records after the domain types they carry (io.ringshift.schemas.avro.RingSnapshot beside
   * io.ringshift.ring.RingSnapshot), and every package has its package-info.
   */
  private static ArchCondition<JavaClass> haveASimpleNameThatNoOtherModuleUses() {
    return new ArchCondition<>("have a simple name that no top-level type of another module has") {
      // Filled by check and read by finish; init empties it, so evaluating the rule again starts afresh.
      private final Map<String, List<JavaClass>> bySimpleName = new TreeMap<>();

      @Override
      public void init(Collection<JavaClass> allObjectsToTest) {
        bySimpleName.clear();
      }

      @Override
      public void check(JavaClass item, ConditionEvents events) {
        if (item.isTopLevelClass() && !item.isAnonymousClass() && !item.getSimpleName().equals("package-info")
            && !item.isAnnotatedWith("org.apache.avro.specific.AvroGenerated")) {
          bySimpleName.computeIfAbsent(item.getSimpleName(), name -> new ArrayList<>()).add(item);
        }
      }

      @Override
      public void finish(ConditionEvents events) {
        bySimpleName.forEach((name, types) -> {
          Set<String> modules = types.stream().map(type -> BuildLayout.moduleOf(type.getPackageName()))
              .collect(toCollection(TreeSet::new));
          if (modules.size() > 1) {
            events.add(SimpleConditionEvent.violated(name, "top-level type " + name + " is in modules " + modules
                + ": " + types.stream().map(JavaClass::getName).sorted().collect(joining(", "))));
          }
        });
      }
    };
  }

  private static ModuleId roleOf(String packageName) {
    for (ModuleId role : BuildLayout.ROLES) {
      if (packageName.equals(role.packageRoot()) || packageName.startsWith(role.packageRoot() + ".")) {
        return role;
      }
    }
    return null;
  }

  private static String[] packagesOf(List<ModuleId> modules) {
    return modules.stream().map(role -> role.packageRoot() + "..").toArray(String[]::new);
  }

  private static String roleModules() {
    return BuildLayout.ROLES.stream().map(ModuleId::module).collect(joining(", "));
  }
}
