package io.ringshift.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.client.internal.GateOutcome;
import io.ringshift.client.internal.SnapshotGate;
import io.ringshift.orchestrator.OrchestratorTopology;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.OwnershipCheckedStore;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzing the three doors bad input comes in by: snapshot bytes into the client's gate, membership events and task
 * statuses (random, and valid Avro mutated) into the orchestrator's topology, and requests into a storage node's
 * HTTP API. The rule everywhere: no crash (no exception escapes, no 500 answer), no hang (every input is answered
 * within its timeout), and every refusal carries a reason (a gate refusal its reason and message, a record on the
 * reject topic its reason, an HTTP error its JSON {@code error} and {@code message}).
 *
 * <p>{@code -Dfuzz.inputs=N} sets the total (default 30,000, a few seconds; 1,000,000 for the documented run):
 * 70% snapshot bytes, 27% orchestrator records, 3% HTTP requests (the slowest). {@code -Dfuzz.seed=S} replays the
 * mutations of a run (the signing key is new each run, so signatures differ). The seed and a summary line with the
 * counts by outcome are printed.
 */
class FuzzTest {
  private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());
  private static final int INPUTS = Integer.getInteger("fuzz.inputs", 30_000);
  private static final String CLUSTER = "fuzz";

  @TempDir Path dir;

  @Test
  void shouldRefuseEveryMalformedSnapshotWithAReasonAndNeverThrow() {
    int inputs = INPUTS * 70 / 100;
    Random random = new Random(SEED);
    System.out.printf("FuzzTest gate: seed %d (replay: -Dfuzz.seed=%d), %d inputs%n", SEED, SEED, inputs);
    SigningKey key = SigningKey.generate();
    SnapshotGate gate = new SnapshotGate(CLUSTER, TrustedKeys.of(key.publicKey()));
    RingSnapshotCodec codec = new RingSnapshotCodec();
    List<PublishedSnapshot> chain = new ArrayList<>();
    byte[] previous = null;
    for (int epoch = 1; epoch <= 6; epoch++) {
      RingSnapshot ring;
      List<FillingRange> marks = List.of();
      if (epoch == 4) {
        // A failure epoch: epoch 3's members without the first, its new replicas marked filling.
        RingSnapshot before = chain.get(2).ring();
        ring = before.toBuilder().epoch(4).members(before.members().subList(1, before.members().size())).build();
        marks = FillingRange.between(before, ring);
      } else {
        ring = RingSnapshot.builder().clusterId(CLUSTER).epoch(epoch).vnodes(8).replicas(3)
            .members(members(3 + epoch)).build();
      }
      chain.add(PublishedSnapshot.unsigned(ring, previous, marks).signedBy(key));
      previous = ring.checksum();
    }
    List<byte[]> valid = chain.stream().map(codec::encode).toList();
    Map<String, Integer> outcomes = new TreeMap<>();
    long slowestNanos = 0;
    for (int i = 0; i < inputs; i++) {
      byte[] bytes = mutate(valid.get(random.nextInt(valid.size())), valid, random);
      int at = random.nextInt(valid.size() + 1);
      AcceptedSnapshot current = at == valid.size() ? null : new AcceptedSnapshot(chain.get(at), valid.get(at), 0);
      long floor = random.nextInt(4) == 0 ? random.nextInt(8) : -1;
      long started = System.nanoTime();
      GateOutcome outcome;
      try {
        outcome = gate.check(bytes, current, floor);
      } catch (RuntimeException e) {
        throw new AssertionError("the gate threw on input " + i + " (seed " + SEED + "): " + e, e);
      }
      slowestNanos = Math.max(slowestNanos, System.nanoTime() - started);
      if (outcome instanceof GateOutcome.Refused r) {
        assertThat(r.reason()).as("input %d (seed %d)", i, SEED).isNotNull();
        assertThat(r.message()).as("input %d (seed %d)", i, SEED).isNotBlank();
        outcomes.merge("refused " + r.reason(), 1, Integer::sum);
      } else {
        outcomes.merge(outcome.getClass().getSimpleName().toLowerCase(), 1, Integer::sum);
      }
    }
    System.out.printf("FuzzTest gate: %d inputs, 0 crashes, slowest check %.1f ms: %s%n", inputs,
        slowestNanos / 1e6, outcomes);
    assertThat(slowestNanos).as("no input makes the gate hang").isLessThan(Duration.ofSeconds(5).toNanos());
  }

  @Test
  void shouldRejectEveryBadMembershipOrStatusRecordWithAReasonAndNeverCrash() {
    int inputs = INPUTS * 27 / 100;
    Random random = new Random(SEED + 1);
    System.out.printf("FuzzTest orchestrator: seed %d (replay: -Dfuzz.seed=%d), %d inputs%n", SEED, SEED, inputs);
    Topics topics = Topics.defaults();
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "fuzz-orchestrator");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("streams").toString());
    Map<String, Integer> outcomes = new TreeMap<>();
    try (TopologyTestDriver driver = new TopologyTestDriver(OrchestratorTopology.build(topics, 1L << 30, 3),
        props)) {
      TestInputTopic<byte[], byte[]> membership = driver.createInputTopic(topics.membership().name(),
          new ByteArraySerializer(), new ByteArraySerializer());
      TestInputTopic<byte[], byte[]> statuses = driver.createInputTopic(topics.taskStatus().name(),
          new ByteArraySerializer(), new ByteArraySerializer());
      TestOutputTopic<String, RejectedEvent> rejected = driver.createOutputTopic(topics.rejected().name(),
          new StringDeserializer(), topics.rejected().valueSerde().deserializer());
      TestOutputTopic<String, byte[]> epochs = driver.createOutputTopic(topics.epochs().name(),
          new StringDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer());
      TestOutputTopic<String, byte[]> tasks = driver.createOutputTopic(topics.tasks().name(),
          new StringDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer());
      membership.pipeInput(RecordKeys.initKey(CLUSTER).getBytes(StandardCharsets.UTF_8),
          RecordSerdes.membershipEvent().serialize(init()));
      List<byte[]> seen = new ArrayList<>();
      for (int i = 0; i < inputs; i++) {
        boolean status = random.nextInt(5) == 0;
        byte[] value;
        byte[] key;
        if (status) {
          TaskStatus s = randomStatus(random);
          value = RecordSerdes.taskStatus().serialize(s);
          key = s.getTaskId().getBytes(StandardCharsets.UTF_8);
        } else {
          MembershipEvent e = randomEvent(random);
          value = RecordSerdes.membershipEvent().serialize(e);
          String k;
          try {
            k = RecordKeys.membershipKey(e);
          } catch (RuntimeException blank) {
            k = e.getClusterId() + "/" + e.getNodeId(); // what a writer that skips the check would send
          }
          key = k.getBytes(StandardCharsets.UTF_8);
        }
        int how = random.nextInt(10);
        if (how < 3) {
          value = mutate(value, seen.isEmpty() ? List.of(value) : seen, random);
        } else if (how == 3) {
          key = random.nextInt(3) == 0 ? null : randomBytes(random, random.nextInt(40));
        } else if (how == 4) {
          value = random.nextInt(4) == 0 ? null : randomBytes(random, random.nextInt(200));
        }
        if (seen.size() < 64 && value != null) {
          seen.add(value);
        }
        try {
          (status ? statuses : membership).pipeInput(key, value);
        } catch (RuntimeException e) {
          throw new AssertionError("the orchestrator failed on input " + i + " (seed " + SEED + "): " + e, e);
        }
        for (RejectedEvent r : rejected.readValuesToList()) {
          assertThat(r.getReason()).as("the reason of a reject, input %d (seed %d)", i, SEED).isNotBlank();
          outcomes.merge("rejected", 1, Integer::sum);
        }
        outcomes.merge("epoch records", epochs.readValuesToList().size(), Integer::sum);
        outcomes.merge("task records", tasks.readValuesToList().size(), Integer::sum);
      }
    }
    System.out.printf("FuzzTest orchestrator: %d inputs, 0 crashes: %s%n", inputs, outcomes);
  }

  @Test
  void shouldAnswerEveryRequestToTheNodeApiWithoutAServerErrorAndKeepServing() throws Exception {
    int inputs = Math.max(200, INPUTS * 3 / 100);
    Random random = new Random(SEED + 2);
    System.out.printf("FuzzTest node API: seed %d (replay: -Dfuzz.seed=%d), %d requests%n", SEED, SEED, inputs);
    RingSnapshot ring = RingSnapshot.builder().clusterId(CLUSTER).epoch(5).vnodes(8).replicas(2)
        .members(members(4)).build();
    String self = ring.members().get(0).id();
    Map<Integer, Integer> statuses = new TreeMap<>();
    try (Store store = OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve("node"), self,
        ring.members().get(0).zone()), () -> ring);
        NodeServer server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5)).build();
      for (int i = 0; i < inputs; i++) {
        String path = randomPath(random);
        // Mostly the method the endpoint serves, so that requests get past the method check to the parameters.
        String method = random.nextInt(4) == 0 ? pick(random, "GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS")
            : methodFor(path, random);
        byte[] body = random.nextInt(3) == 0 ? frames(random) : randomBytes(random, random.nextInt(64));
        HttpRequest request;
        // Both listeners: the client port; the admin listener with the secret (most), a wrong one or none.
        boolean admin = random.nextInt(3) != 0;
        int auth = random.nextInt(8);
        try {
          HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://"
              + (admin ? server.adminHostPort() : server.hostPort()) + path))
              .timeout(Duration.ofSeconds(10))
              .method(method, random.nextBoolean() ? HttpRequest.BodyPublishers.ofByteArray(body)
                  : HttpRequest.BodyPublishers.noBody());
          if (auth < 6) {
            builder.header("Authorization", server.adminSecret().authorization());
          } else if (auth == 6) {
            builder.header("Authorization", "Bearer " + new String(randomBytes(random, 24), StandardCharsets.ISO_8859_1)
                .replaceAll("[^!-~]", "x"));
          }
          request = builder.build();
        } catch (IllegalArgumentException e) {
          continue; // a path the JDK client itself will not send
        }
        HttpResponse<byte[]> response;
        try {
          response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
          throw new AssertionError("request " + i + " (" + method + " " + path + ", seed " + SEED
              + ") got no answer: " + e, e);
        }
        int status = response.statusCode();
        statuses.merge(status, 1, Integer::sum);
        String text = new String(response.body(), StandardCharsets.UTF_8);
        assertThat(status).as("%s %s (seed %d): %s", method, path, SEED, text).isLessThan(500);
        if (status >= 400 && !method.equals("HEAD")) {
          assertThat(text).as("%s %s (seed %d)", method, path, SEED).contains("\"error\"").contains("\"message\"");
        }
      }
      HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://" + server.hostPort()
          + "/health")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).as("still serving").isEqualTo(200);
    }
    System.out.printf("FuzzTest node API: %d requests, 0 server errors, answers by status: %s%n", inputs, statuses);
  }

  // ---- generators

  private static List<io.ringshift.ring.Member> members(int n) {
    List<io.ringshift.ring.Member> members = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      members.add(io.ringshift.ring.Member.of(String.format("node-%02d", i), "az-" + (i % 3 + 1)));
    }
    return members;
  }

  private static MembershipEvent init() {
    List<MemberSpec> specs = new ArrayList<>();
    for (io.ringshift.ring.Member m : members(6)) {
      specs.add(new MemberSpec(m.id(), m.zone(), 1.0, MemberSpecState.ACTIVE, java.util.List.of()));
    }
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("").setAction(MembershipAction.INIT)
        .setRequestId("init").setRequestedBy("fuzz").setTimestampMillis(0).setInitialMembers(specs).setVnodes(8)
        .setReplicas(3).build();
  }

  private static MembershipEvent randomEvent(Random random) {
    MembershipAction action = MembershipAction.values()[random.nextInt(MembershipAction.values().length)];
    String node = random.nextInt(10) == 0 ? pick(random, "", " ", "node\n1", "x".repeat(300))
        : String.format("node-%02d", 1 + random.nextInt(14));
    MembershipEvent.Builder b = MembershipEvent.newBuilder()
        .setClusterId(random.nextInt(8) == 0 ? pick(random, "", "other", "fuzz\u0000") : CLUSTER)
        .setNodeId(node)
        .setAction(action)
        .setZone(random.nextBoolean() ? "az-" + random.nextInt(5) : random.nextInt(5) == 0 ? "" : null)
        .setWeight(random.nextInt(3) == 0 ? null : pickWeight(random))
        .setRequestId("r-" + random.nextInt(1_000_000))
        .setRequestedBy("fuzz")
        .setTimestampMillis(random.nextLong());
    if (action == MembershipAction.INIT || random.nextInt(10) == 0) {
      List<MemberSpec> specs = new ArrayList<>();
      for (int i = 0; i < random.nextInt(6); i++) {
        specs.add(new MemberSpec("m-" + random.nextInt(9), "az-" + random.nextInt(4), pickWeight(random),
            MemberSpecState.values()[random.nextInt(MemberSpecState.values().length)], java.util.List.of()));
      }
      b.setInitialMembers(specs).setVnodes(random.nextInt(70) - 3).setReplicas(random.nextInt(7) - 1);
    }
    return b.build();
  }

  private static double pickWeight(Random random) {
    double[] weights = {1.0, 0.5, 2.0, 0.0, -1.0, Double.NaN, Double.POSITIVE_INFINITY, 1e300, 1e-300, 3.0};
    return weights[random.nextInt(weights.length)];
  }

  private static TaskStatus randomStatus(Random random) {
    long epoch = random.nextInt(6) - 1;
    String id = random.nextInt(4) == 0 ? "garbage-" + random.nextInt(100)
        : RecordKeys.taskId(CLUSTER, Math.max(0, epoch), io.ringshift.schemas.avro.TaskKind.COPY, random.nextLong(),
            random.nextLong(), "node-0" + (1 + random.nextInt(7)));
    return TaskStatus.newBuilder().setTaskId(id).setClusterId(random.nextInt(6) == 0 ? "other" : CLUSTER)
        .setEpoch(epoch).setState(TaskState.values()[random.nextInt(TaskState.values().length)])
        .setCopiedBytes(random.nextLong()).setTimestampMillis(random.nextLong()).build();
  }

  private static String randomPath(Random random) {
    String range = "start=" + hexOrJunk(random) + "&end=" + hexOrJunk(random);
    String epoch = "epoch=" + pick(random, "1", "5", "6", "7", "-1", "9223372036854775807", "x", "", "99999999999999999999");
    String hexKey = random.nextInt(8) == 0 ? pick(random, "", "zz", "0", "%00", "%2F..")
        : java.util.HexFormat.of().formatHex(randomBytes(random, 1 + random.nextInt(12)));
    return switch (random.nextInt(12)) {
      case 0 -> "/health" + (random.nextBoolean() ? "" : "?x=1");
      case 1, 2 -> "/v1/keys/" + hexKey + (random.nextBoolean() ? "?" + epoch : "");
      case 3 -> "/v1/scan?" + range + (random.nextBoolean() ? "&afterPosition=" + hexOrJunk(random) + "&afterKey="
          + hexKey : "");
      case 4 -> "/v1/changes?" + range + "&after=" + pick(random, "0", "5", "-3", "x", "18446744073709551616");
      case 5 -> pick(random, "/v1/apply", "/v1/writes");
      case 6 -> "/v1/digest?" + range;
      case 7 -> "/v1/fences" + (random.nextBoolean() ? "?" + range + "&" + epoch : "");
      case 8 -> "/v1/range?" + range + (random.nextBoolean() ? "&" + epoch : "");
      case 9 -> "/v1/" + pick(random, "", "keys", "keys/", "scan?start=1&start=2&end=3", "fences?epoch=1&epoch=2");
      case 10 -> "/" + pick(random, "", "v2/keys/00", "..", "%2e%2e/health", "health/extra");
      default -> "/v1/range?" + range + "&" + epoch + "&extra=" + random.nextInt(9);
    };
  }

  private static String methodFor(String path, Random random) {
    if (path.startsWith("/v1/keys/")) {
      return pick(random, "GET", "PUT", "DELETE");
    }
    if (path.startsWith("/v1/apply") || path.startsWith("/v1/writes")) {
      return "POST";
    }
    if (path.startsWith("/v1/fences")) {
      return pick(random, "GET", "POST", "DELETE");
    }
    if (path.startsWith("/v1/range")) {
      return "DELETE";
    }
    return "GET";
  }

  private static String hexOrJunk(Random random) {
    return random.nextInt(6) == 0 ? pick(random, "", "g", "-1", "12345678901234567", "0x10", "%20")
        : Long.toHexString(random.nextLong());
  }

  /**
   * ENTRY frames as the apply endpoint reads them, or WRITE frames as the writes endpoint does (an epoch where the
   * position is), some well formed, some cut or lying about their lengths.
   */
  private static byte[] frames(Random random) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    try {
      for (int f = 0; f < 1 + random.nextInt(4); f++) {
        byte[] key = randomBytes(random, random.nextInt(5) == 0 ? 0 : 1 + random.nextInt(16));
        byte[] value = randomBytes(random, random.nextInt(64));
        int length = 1 + 8 + 4 + key.length + 4 + value.length;
        out.writeInt(random.nextInt(6) == 0 ? random.nextInt() : length);
        boolean write = random.nextBoolean();
        out.writeByte(random.nextInt(5) == 0 ? random.nextInt(256) : write ? 5 : 1);
        out.writeLong(write ? (long) pick(random, 4L, 5L, 6L, 7L, -1L, Long.MAX_VALUE, random.nextLong())
            : random.nextBoolean() ? io.ringshift.storage.Entry.positionOf(key) : random.nextLong());
        out.writeInt(random.nextInt(8) == 0 ? random.nextInt() : key.length);
        out.write(key);
        out.writeInt(random.nextInt(8) == 0 ? -1 : value.length);
        out.write(value);
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    byte[] all = bytes.toByteArray();
    return random.nextInt(4) == 0 ? Arrays.copyOf(all, random.nextInt(all.length + 1)) : all;
  }

  /** One of several mutations of {@code bytes}: bit flips, overwrites, cuts, growth, splices, shuffles. */
  private static byte[] mutate(byte[] bytes, List<byte[]> others, Random random) {
    if (bytes.length == 0) {
      return randomBytes(random, 1 + random.nextInt(64)); // nothing to flip, cut or splice in no bytes
    }
    byte[] b = bytes.clone();
    switch (random.nextInt(9)) {
      case 0 -> {
        for (int k = 0; k < 1 + random.nextInt(4); k++) {
          int at = random.nextInt(b.length);
          b[at] ^= (byte) (1 << random.nextInt(8));
        }
        return b;
      }
      case 1 -> {
        b[random.nextInt(b.length)] = (byte) (int) pick(random, 0, 0xFF, 0x7F, 0x80, 0x01);
        return b;
      }
      case 2 -> {
        return Arrays.copyOf(b, random.nextInt(b.length));
      }
      case 3 -> {
        byte[] grown = Arrays.copyOf(b, b.length + 1 + random.nextInt(64));
        for (int k = b.length; k < grown.length; k++) {
          grown[k] = (byte) random.nextInt(256);
        }
        return grown;
      }
      case 4 -> {
        byte[] other = others.get(random.nextInt(others.size()));
        if (other.length == 0) {
          return b;
        }
        int cut = random.nextInt(Math.min(b.length, other.length));
        byte[] spliced = Arrays.copyOf(b, other.length);
        System.arraycopy(other, cut, spliced, cut, other.length - cut);
        return spliced;
      }
      case 5 -> {
        int from = random.nextInt(b.length);
        int to = random.nextInt(b.length);
        byte t = b[from];
        b[from] = b[to];
        b[to] = t;
        return b;
      }
      case 6 -> {
        return randomBytes(random, random.nextInt(b.length * 2 + 1));
      }
      case 7 -> {
        // A varint-looking run: Avro lengths and longs decode from these.
        int at = 10 + random.nextInt(Math.max(1, b.length - 10));
        for (int k = at; k < Math.min(b.length, at + 1 + random.nextInt(10)); k++) {
          b[k] = (byte) 0xFF;
        }
        return b;
      }
      default -> {
        return b; // unchanged: valid inputs go through too
      }
    }
  }

  private static byte[] randomBytes(Random random, int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  @SafeVarargs
  private static <T> T pick(Random random, T... items) {
    return items[random.nextInt(items.length)];
  }
}
