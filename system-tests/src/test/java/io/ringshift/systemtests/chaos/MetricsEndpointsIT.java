package io.ringshift.systemtests.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.Ringshift;
import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every role as its own process with {@code --metrics-port 0} (docs/metrics.md): an orchestrator, a publisher, a
 * worker and four storage nodes on one embedded broker. After a cluster of three nodes is declared and the fourth
 * joins, every endpoint is scraped over HTTP: each carries every name docs/metrics.md lists for its role, and the
 * epoch gauges reach the published epoch. Then each endpoint is scraped 50 times and the median latency printed.
 * (In the {@code chaos} package for its {@link RoleProcess}.)
 */
class MetricsEndpointsIT {
  private static final String CLUSTER = "c1";
  private static final String PREFIX = "metrics-";
  private static final Duration START = Duration.ofMinutes(2);
  private static final Pattern CTRL_C = Pattern.compile("Ctrl-C stops it\\.");
  private static final Pattern URL = Pattern.compile("metrics at (http://127\\.0\\.0\\.1:[0-9]+/metrics)");
  private static final int SCRAPES = 50;
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir static Path brokerDir;
  private static EmbeddedKafka kafka;

  private final Path dir = Path.of("target", "metrics-it", "run-" + System.currentTimeMillis());
  private final List<RoleProcess> all = new ArrayList<>();

  @BeforeAll
  static void startBroker() {
    kafka = EmbeddedKafka.builder().dataDir(brokerDir.resolve("kafka")).build().start();
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  void shouldServeEveryDocumentedMetricOnEveryRolesEndpoint() throws Exception {
    Files.createDirectories(dir.resolve("tmp"));
    String bootstrap = kafka.bootstrapServers();
    SigningKey key = SigningKey.generate();
    Path keyFile = dir.resolve("publisher.key");
    Path publicKey = dir.resolve("publisher.pub");
    key.write(keyFile, publicKey);
    Path secretFile = dir.resolve("admin.secret");
    AdminSecret secret = AdminSecret.readOrCreate(secretFile);
    Map<String, Integer> clientPorts = new LinkedHashMap<>();
    Map<String, Integer> adminPorts = new LinkedHashMap<>();
    for (int i = 1; i <= 4; i++) {
      String id = "node-0" + i;
      clientPorts.put(id, freePort(clientPorts, adminPorts));
      adminPorts.put(id, freePort(clientPorts, adminPorts));
    }
    StringBuilder nodesFile = new StringBuilder();
    adminPorts.forEach((id, port) -> nodesFile.append(id).append(" 127.0.0.1:").append(port).append('\n'));
    Path nodesPath = dir.resolve("nodes.txt");
    Files.writeString(nodesPath, nodesFile);
    List<String> metrics = List.of("--metrics-port", "0", "--metrics-host", "127.0.0.1");
    try {
      RoleProcess orchestrator = role("orchestrator", with(metrics, "orchestrator", "--bootstrap", bootstrap,
          "--topic-prefix", PREFIX, "--state-dir", dir.resolve("streams").toString(), "--application-id",
          PREFIX + "orchestrator"));
      orchestrator.start(START); // it creates the topics the others read
      RoleProcess publisher = role("publisher", with(metrics, "publisher", "--bootstrap", bootstrap, "--topic-prefix",
          PREFIX, "--signing-key", keyFile.toString(), "--transactional-id", PREFIX + "publisher", "--timeout", "30"));
      publisher.launch();
      List<RoleProcess> nodes = new ArrayList<>();
      int zone = 0;
      for (String id : clientPorts.keySet()) {
        RoleProcess node = role(id, with(metrics, "node", "--id", id, "--zone", "az-" + (zone++ % 3 + 1),
            "--data-dir", dir.resolve("nodes").resolve(id).toString(), "--port", clientPorts.get(id).toString(),
            "--admin-port", adminPorts.get(id).toString(), "--admin-secret-file", secretFile.toString(),
            "--bootstrap", bootstrap, "--topic-prefix", PREFIX, "--cluster", CLUSTER, "--trusted-key",
            publicKey.toString(), "--threads", "4"));
        node.launch();
        nodes.add(node);
      }
      RoleProcess worker = role("worker", with(metrics, "worker", "--bootstrap", bootstrap, "--topic-prefix", PREFIX,
          "--timeout", "60", "--group-id", PREFIX + "workers", "--worker-id", "worker-1", "--nodes",
          nodesPath.toString(), "--node-secret-file", secretFile.toString(), "--trusted-key", publicKey.toString(),
          "--grace", "1s", "--node-timeout", "20s"));
      worker.launch();
      for (RoleProcess role : all) {
        role.awaitReady(START);
      }
      Map<String, String> urls = new LinkedHashMap<>();
      for (RoleProcess role : all) {
        urls.put(role.name(), url(role));
      }
      System.out.println("MetricsEndpointsIT: endpoints " + urls);

      Topics topics = Topics.withPrefix(PREFIX);
      Properties props = new Properties();
      props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
          new ByteArraySerializer())) {
        List<MemberSpec> specs = List.of(new MemberSpec("node-01", "az-1", 1.0, MemberSpecState.ACTIVE, java.util.List.of()),
            new MemberSpec("node-02", "az-2", 1.0, MemberSpecState.ACTIVE, java.util.List.of()),
            new MemberSpec("node-03", "az-3", 1.0, MemberSpecState.ACTIVE, java.util.List.of()));
        send(producer, topics, event(MembershipAction.INIT, "", null, 1).setInitialMembers(specs).setVnodes(16)
            .setReplicas(2).build());
        awaitGauge(urls.get("publisher"), "ringshift_publisher_epoch{cluster=\"c1\"}", 1);
        for (String node : clientPorts.keySet()) {
          awaitGauge(urls.get(node), "ringshift_client_epoch{cluster=\"c1\"}", 1);
        }
        // Data for the join to copy, written past the ownership check (admin apply), and client writes at epoch 1.
        for (String id : List.of("node-01", "node-02", "node-03")) {
          try (Store admin = RemoteStore.connectAdmin("127.0.0.1:" + adminPorts.get(id), secret,
              Duration.ofSeconds(10))) {
            List<Entry> entries = new ArrayList<>();
            for (int k = 0; k < 300; k++) {
              entries.add(Entry.of(("k" + k).getBytes(StandardCharsets.UTF_8), new byte[100]));
            }
            admin.apply(entries);
          }
          try (Store client = RemoteStore.connect("127.0.0.1:" + clientPorts.get(id), Duration.ofSeconds(10))) {
            for (int k = 0; k < 20; k++) {
              client.put(("w" + k).getBytes(StandardCharsets.UTF_8), new byte[10], 1);
            }
          }
        }
        send(producer, topics, event(MembershipAction.JOIN, "node-04", "az-1", 2).build());
      }
      awaitGauge(urls.get("publisher"), "ringshift_publisher_epoch{cluster=\"c1\"}", 2);
      awaitGauge(urls.get("orchestrator"), "ringshift_orchestrator_published_epoch{cluster=\"c1\"}", 2);
      awaitGauge(urls.get("orchestrator"), "ringshift_orchestrator_epoch{cluster=\"c1\"}", 2);
      for (String node : clientPorts.keySet()) {
        awaitGauge(urls.get(node), "ringshift_client_epoch{cluster=\"c1\"}", 2);
      }

      Map<String, Set<String>> documented = documentedNames(Path.of("..", "docs", "metrics.md"));
      Map<String, String> scrapes = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : urls.entrySet()) {
        String body = get(e.getValue());
        scrapes.put(e.getKey(), body);
        Files.writeString(dir.resolve(e.getKey() + ".prom"), body);
        String role = e.getKey().startsWith("node-") ? "node" : e.getKey();
        Set<String> expected = new LinkedHashSet<>(documented.get(role));
        expected.addAll(documented.get("every"));
        Set<String> present = names(body);
        assertThat(present).as("%s (%s) serves every name docs/metrics.md lists for %s; its scrape is in %s",
            e.getKey(), e.getValue(), role, dir.resolve(e.getKey() + ".prom")).containsAll(expected);
      }
      assertThat(value(scrapes.get("worker"), "ringshift_worker_bytes_copied_total"))
          .as("the join copied bytes").isPositive();
      double writes = 0;
      for (String node : List.of("node-01", "node-02", "node-03")) {
        writes += value(scrapes.get(node), "ringshift_node_writes_total{op=\"put\"}")
            + value(scrapes.get(node), "ringshift_node_refusals_total{reason=\"not-a-replica\"}");
      }
      assertThat(writes).as("every client write applied or refused").isEqualTo(60);

      System.out.printf(Locale.ROOT, "MetricsEndpointsIT: scrape latency, %d scrapes per endpoint, each one HTTP GET "
          + "on a kept-alive connection:%n", SCRAPES);
      for (Map.Entry<String, String> e : urls.entrySet()) {
        long[] nanos = new long[SCRAPES];
        int bytes = 0;
        for (int i = 0; i < SCRAPES; i++) {
          long t0 = System.nanoTime();
          bytes = get(e.getValue()).length();
          nanos[i] = System.nanoTime() - t0;
        }
        Arrays.sort(nanos);
        System.out.printf(Locale.ROOT, "  %-12s median %6.2f ms, 90th percentile %6.2f ms, max %6.2f ms (%d series, "
                + "%,d bytes)%n", e.getKey(), nanos[SCRAPES / 2] / 1e6, nanos[SCRAPES * 9 / 10] / 1e6,
            nanos[SCRAPES - 1] / 1e6, series(scrapes.get(e.getKey())), bytes);
      }
    } finally {
      all.forEach(RoleProcess::kill);
    }
  }

  private static List<String> with(List<String> metrics, String... args) {
    List<String> out = new ArrayList<>(List.of(args));
    out.addAll(metrics);
    return out;
  }

  private RoleProcess role(String name, List<String> args) {
    RoleProcess p = new RoleProcess(name, Ringshift.class.getName(), args, dir.resolve(name + ".log"),
        dir.resolve("tmp"), CTRL_C);
    all.add(p);
    return p;
  }

  /** The metrics URL the role printed on its banner line. */
  private String url(RoleProcess role) throws IOException {
    Matcher m = URL.matcher(Files.readString(dir.resolve(role.name() + ".log")));
    assertThat(m.find()).as("%s printed its metrics URL: %s", role.name(), role.tail()).isTrue();
    return m.group(1);
  }

  private static int requests;

  private static MembershipEvent.Builder event(MembershipAction action, String node, String zone, int request) {
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId(node).setAction(action).setZone(zone)
        .setWeight(null).setRequestId(PREFIX + "r" + request + "-" + (++requests)).setRequestedBy("metrics-it")
        .setTimestampMillis(System.currentTimeMillis());
  }

  private static void send(KafkaProducer<byte[], byte[]> producer, Topics topics, MembershipEvent e)
      throws Exception {
    producer.send(new ProducerRecord<>(topics.membership().name(),
        RecordKeys.membershipKey(e).getBytes(StandardCharsets.UTF_8), RecordSerdes.membershipEvent().serialize(e)))
        .get();
  }

  private static String get(String url) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(url).isEqualTo(200);
    return r.body();
  }

  private static void awaitGauge(String url, String series, double expected) {
    await(series + " = " + expected + " on " + url).atMost(START).pollInterval(Duration.ofMillis(250))
        .until(() -> value(get(url), series) == expected);
  }

  /** The value of a series written exactly so (name and labels as the registry writes them); NaN when absent. */
  static double value(String scrape, String series) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]);
      }
    }
    return Double.NaN;
  }

  /** The metric names of a scrape: every sample line's name, without its labels. */
  static Set<String> names(String scrape) {
    Set<String> names = new LinkedHashSet<>();
    for (String line : scrape.split("\n")) {
      if (!line.isBlank() && !line.startsWith("#")) {
        names.add(line.split("[{ ]", 2)[0]);
      }
    }
    return names;
  }

  private static long series(String scrape) {
    return Arrays.stream(scrape.split("\n")).filter(l -> !l.isBlank() && !l.startsWith("#")).count();
  }

  /**
   * The names docs/metrics.md lists, by role: the first column of the table rows under each {@code ## } heading
   * that names a role in backticks ({@code `ringshift worker`}), and under the heading "Every role process".
   */
  static Map<String, Set<String>> documentedNames(Path doc) throws IOException {
    Map<String, Set<String>> byRole = new LinkedHashMap<>();
    String role = null;
    Pattern heading = Pattern.compile("^## .*`ringshift (orchestrator|worker|publisher|node)`.*");
    Pattern row = Pattern.compile("^\\| `([a-z_:]+)` \\|.*");
    for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
      if (line.startsWith("## ")) {
        Matcher h = heading.matcher(line);
        role = h.matches() ? h.group(1) : line.startsWith("## Every role process") ? "every" : null;
        continue;
      }
      Matcher r = row.matcher(line);
      if (role != null && r.matches()) {
        byRole.computeIfAbsent(role, k -> new LinkedHashSet<>()).add(r.group(1));
      }
    }
    assertThat(byRole).as("docs/metrics.md lists names for every role").containsOnlyKeys("orchestrator", "worker",
        "publisher", "node", "every");
    return byRole;
  }

  private static int freePort(Map<String, Integer> a, Map<String, Integer> b) throws IOException {
    while (true) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (!a.containsValue(port) && !b.containsValue(port)) {
          return port;
        }
      }
    }
  }
}
