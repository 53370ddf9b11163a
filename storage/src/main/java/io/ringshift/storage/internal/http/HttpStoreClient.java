package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.storage.internal.Checks;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Store} SPI over a node's HTTP API, on the JDK's {@link HttpClient} (HTTP/1.1, pooled keep-alive
 * connections). Errors come back as the store raised them: 400 is {@link StoreException.BadRequest} with the
 * node's own message, 409 a {@link WriteResult.RetryWithEpoch}, 410 {@link StoreException.FeedUnavailable}, and a
 * node that cannot be reached, times out or is closed {@link StoreException.Unavailable} naming its address.
 *
 * <p>Scans and feeds read their chunked response lazily, one frame at a time, so a range of any size streams in
 * bounded memory: a feed through the JDK client's flow-controlled body stream, a scan on a connection of its own
 * ({@link StreamConnection}, read by the scan's reader itself: the JDK client's read path was a copy's largest
 * cost in the worker). The timeout bounds connecting and waiting for an
 * answer's headers; the JDK client does not time out a body that stops arriving (JDK-8258397), so the client
 * bounds that itself: a read of a stream that waits longer than the timeout for the body's next bytes is aborted and
 * throws {@link StoreException.Unavailable} ("no data arrived for N ms").
 *
 * <p>Design note (the idle timeout): each stream's body is wrapped so that a read records the moment it started to
 * wait on the network and clears it when bytes came back. One daemon watchdog thread, shared by all clients of the
 * process, checks each client's open streams a few times per timeout from its first stream, and closes the body of
 * a stream whose read has waited longer than the timeout; closing the JDK's body stream wakes the blocked read with an IOException, which
 * the stream turns into the idle-timeout error. Only time spent inside a read counts, so a reader that is slow to
 * ask for the next item (a throttled copy) is never aborted, however long it pauses.
 */
public final class HttpStoreClient implements Store {
  private static final Logger LOG = LoggerFactory.getLogger(HttpStoreClient.class);
  /** The JDK client's socket read and body buffer size: 256 KiB instead of its 16 KiB default. */
  static final String BUFFER_SIZE = Integer.toString(256 * 1024);

  static {
    // The JDK client reads a response into buffers of this size and hands each to the body's reader on another
    // thread: at 16 KiB a scan read on loopback spends most of its time in those hand-offs (a copy's scan thread
    // waited 2.7 s of a 4.7 s copy; 0.2 s at 256 KiB). It is read once, when the JDK's HTTP client classes load, so
    // it takes effect only if nothing in the process used java.net.http before; an explicit setting is kept.
    if (System.getProperty("jdk.httpclient.bufsize") == null) {
      System.setProperty("jdk.httpclient.bufsize", BUFFER_SIZE);
    }
  }

  private final String hostPort;
  private final URI base;
  private final Duration timeout;
  private final AdminSecret secret;
  private final HttpClient client;
  private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
  /** This client's check on the shared watchdog thread; null until its first stream. */
  private ScheduledFuture<?> watchdog;
  private volatile boolean closed;

  private HttpStoreClient(String hostPort, URI base, Duration timeout, AdminSecret secret, boolean batched) {
    this.hostPort = hostPort;
    this.writesUnsupported = !batched;
    this.base = base;
    this.timeout = timeout;
    this.secret = secret;
    this.client = sharedClient(hostPort, timeout);
  }

  /**
   * JDK clients shared by every node client of the process with the same timeout, {@link #SHARED_CLIENTS} of them,
   * a node always on the same one. Each JDK client has a selector thread and a pool of worker threads of its own,
   * and keeps its connections per destination anyway: a client per node made a process that talks to 120 nodes (a
   * worker, an application's {@code RingClient}) hold 120 selector threads and hundreds of idle workers. Closing a
   * node client never closed its JDK client (Java 17 has no close), so sharing changes nothing there.
   */
  private static final int SHARED_CLIENTS = 4;
  private static final Map<Duration, HttpClient[]> SHARED = new ConcurrentHashMap<>();

  private static HttpClient sharedClient(String hostPort, Duration timeout) {
    HttpClient[] clients = SHARED.computeIfAbsent(timeout, t -> {
      HttpClient[] built = new HttpClient[SHARED_CLIENTS];
      for (int i = 0; i < built.length; i++) {
        built[i] = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(t)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
      }
      return built;
    });
    return clients[Math.floorMod(hostPort.hashCode(), SHARED_CLIENTS)];
  }

  /** One daemon thread checks the open streams of every node client of the process for the idle timeout. */
  private static final ScheduledExecutorService WATCHDOG = watchdogThread();

  private static ScheduledExecutorService watchdogThread() {
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
      Thread t = new Thread(task, "remote-store-watchdog");
      t.setDaemon(true);
      return t;
    });
    // A closed client's check leaves the queue at once.
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /**
   * A client for the node at {@code hostPort}; contacts nobody until the first call.
   *
   * @throws StoreException.BadRequest when {@code hostPort} is not {@code host:port} or the timeout is not positive
   */
  public static HttpStoreClient connect(String hostPort, Duration timeout) {
    return connect(hostPort, timeout, null);
  }

  /**
   * As {@link #connect(String, Duration)}, sending {@code secret} with every request (a node's admin listener);
   * {@code secret} null sends none (a node's client port).
   */
  public static HttpStoreClient connect(String hostPort, Duration timeout, AdminSecret secret) {
    return connect(hostPort, timeout, secret, true);
  }

  /** As {@link #connect(String, Duration, AdminSecret)}; {@code batched} false sends every write on its own. */
  public static HttpStoreClient connect(String hostPort, Duration timeout, AdminSecret secret, boolean batched) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new StoreException.BadRequest("timeout " + timeout + " must be positive");
    }
    if (hostPort == null || hostPort.isBlank()) {
      throw new StoreException.BadRequest("node address is missing; give host:port");
    }
    URI base;
    try {
      base = new URI("http://" + hostPort.trim());
    } catch (URISyntaxException e) {
      throw new StoreException.BadRequest("node address '" + hostPort + "' is not host:port: " + e.getMessage());
    }
    if (base.getHost() == null || base.getPort() < 1 || base.getPort() > 65_535
        || !(base.getRawPath() == null || base.getRawPath().isEmpty()) || base.getRawQuery() != null
        || base.getRawUserInfo() != null) {
      throw new StoreException.BadRequest("node address '" + hostPort + "' is not host:port with a port 1..65535");
    }
    return new HttpStoreClient(hostPort.trim(), base, timeout, secret, batched);
  }

  // ---- the SPI

  @Override
  public NodeInfo info() {
    Map<String, Object> health = Json.object(new String(call("GET", HttpApi.HEALTH, null, 200).body(), UTF_8));
    Object incarnation = health.get("incarnation");
    return new NodeInfo(string(health, "nodeId"), string(health, "zone"), number(health, "latestSequence"),
        number(health, "keys"), incarnation == null ? null : String.valueOf(incarnation));
  }

  @Override
  public long latestSequence() {
    return info().latestSequence();
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    return write(key, value, epoch, null);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    Checks.version(version);
    return write(key, value, epoch, version);
  }

  private WriteResult write(byte[] key, byte[] value, long epoch, Version version) {
    if (key == null) {
      Checks.key(null);
    }
    if (value == null) {
      Checks.value(null);
    }
    if (batches(key, value)) {
      return batched(new PendingWrite(epoch, key, value, version));
    }
    return single(key, value, epoch, version);
  }

  /** One write in a request of its own ({@code PUT} or {@code DELETE /v1/keys/KEY}); null version: node-stamped. */
  private WriteResult single(byte[] key, byte[] value, long epoch, Version version) {
    String query = "?epoch=" + epoch + (version == null ? "" : "&version=" + HttpApi.versionText(version));
    if (value == null) {
      return written(call("DELETE", keyPath(key) + query, null, 200, 409));
    }
    return written(call("PUT", keyPath(key) + query, value, 200, 409));
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    return deleteAt(key, epoch, null);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    Checks.version(version);
    return deleteAt(key, epoch, version);
  }

  private WriteResult deleteAt(byte[] key, long epoch, Version version) {
    if (key == null) {
      Checks.key(null);
    }
    if (batches(key, null)) {
      return batched(new PendingWrite(epoch, key, null, version));
    }
    return single(key, null, epoch, version);
  }

  // ---- batched client writes (docs/storage.md, "Batched writes")

  /**
   * Most batches of client writes in flight to the node at once; writes that arrive meanwhile go in the next. One
   * makes the batches largest, and the JDK client's and server's per-request work is what limits a writer.
   */
  static final int MAX_BATCHES_IN_FLIGHT = 1;
  /** Most writes in one batch. */
  static final int MAX_BATCH_WRITES = 256;
  /** Most key and value bytes in one batch; a larger write goes in a request of its own. */
  static final long MAX_BATCH_BYTES = 1024 * 1024;

  private final Object batchLock = new Object();
  private final java.util.ArrayDeque<PendingWrite> pending = new java.util.ArrayDeque<>();
  private int batchesInFlight;
  /**
   * Every write goes on its own: asked for, or the node answered that it serves no {@code /v1/writes} (an older
   * node).
   */
  private volatile boolean writesUnsupported;
  /** Batches sent and the writes they carried, for tests. */
  private final java.util.concurrent.atomic.AtomicLong batchesSent = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong batchedWrites = new java.util.concurrent.atomic.AtomicLong();

  /** For tests and diagnostics: {batches sent, writes they carried, writes waiting for a batch now}. */
  public long[] batchStats() {
    synchronized (batchLock) {
      return new long[] {batchesSent.get(), batchedWrites.get(), pending.size()};
    }
  }

  /** A client write waiting for its batch, and then for its answer. Guarded by {@code batchLock}. */
  private static final class PendingWrite {
    final long epoch;
    final byte[] key;
    final byte[] value;
    final Version version;
    Thread thread;
    boolean taken;
    /** Its caller's turn to send the next batch. */
    boolean sends;
    boolean done;
    WriteResult result;
    RuntimeException error;

    PendingWrite(long epoch, byte[] key, byte[] value, Version version) {
      this.epoch = epoch;
      this.key = key;
      this.value = value;
      this.version = version;
    }

    long size() {
      return key.length + (value == null ? 0 : value.length);
    }
  }

  private boolean batches(byte[] key, byte[] value) {
    return !writesUnsupported && key.length + (value == null ? 0L : value.length) <= MAX_BATCH_BYTES;
  }

  /**
   * Group commit: the write joins the queue of writes to this node; when fewer than {@link #MAX_BATCHES_IN_FLIGHT}
   * batches are in flight, the caller sends the queue's head (its own write included, up to the batch limits) as one
   * {@code POST /v1/writes}, else it waits, and whichever caller sends next takes it along. At one write at a time
   * every batch holds one write; under concurrency a batch holds what arrived during the last round trip.
   */
  private WriteResult batched(PendingWrite write) {
    write.thread = Thread.currentThread();
    boolean send;
    synchronized (batchLock) {
      pending.add(write);
      send = batchesInFlight < MAX_BATCHES_IN_FLIGHT;
      if (send) {
        batchesInFlight++;
      }
    }
    boolean interrupted = false;
    try {
      while (true) {
        if (send) {
          // This caller sends the next batch: the queue's head, its own write included.
          List<PendingWrite> batch = new ArrayList<>();
          synchronized (batchLock) {
            long bytes = 0;
            while (!pending.isEmpty() && batch.size() < MAX_BATCH_WRITES
                && (batch.isEmpty() || bytes + pending.peek().size() <= MAX_BATCH_BYTES)) {
              PendingWrite next = pending.poll();
              next.taken = true;
              bytes += next.size();
              batch.add(next);
            }
          }
          try {
            if (!batch.isEmpty()) {
              send(batch);
            }
          } finally {
            synchronized (batchLock) {
              // Hand the turn to the oldest waiting write's caller that has none yet (one wake-up, not one per
              // waiting caller); with nobody waiting, the turn ends.
              PendingWrite next = null;
              for (PendingWrite waiting : pending) {
                if (!waiting.sends) {
                  next = waiting;
                  break;
                }
              }
              if (next != null) {
                next.sends = true;
                LockSupport.unpark(next.thread);
              } else {
                batchesInFlight--;
              }
            }
          }
          send = false;
        }
        synchronized (batchLock) {
          // The turn first: a caller handed it sends (or passes on) the next batch even when its own write is done.
          if (write.sends) {
            write.sends = false;
            send = true;
            continue;
          }
          if (write.done) {
            if (write.error != null) {
              throw write.error;
            }
            return write.result;
          }
        }
        LockSupport.park(this);
        if (Thread.interrupted()) {
          interrupted = true; // the write is queued or sent: its answer comes within the timeout
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Sends one batch and hands each write its answer; never throws. */
  private void send(List<PendingWrite> batch) {
    WriteResult[] results = new WriteResult[batch.size()];
    RuntimeException[] errors = new RuntimeException[batch.size()];
    try {
      if (writesUnsupported) {
        singles(batch, results, errors);
      } else {
        sendBatch(batch, results, errors);
      }
    } catch (RuntimeException e) {
      for (int i = 0; i < batch.size(); i++) {
        if (results[i] == null && errors[i] == null) {
          errors[i] = e;
        }
      }
    }
    synchronized (batchLock) {
      for (int i = 0; i < batch.size(); i++) {
        PendingWrite w = batch.get(i);
        w.result = results[i];
        w.error = errors[i];
        w.done = true;
      }
    }
    for (PendingWrite w : batch) {
      LockSupport.unpark(w.thread);
    }
  }

  private void singles(List<PendingWrite> batch, WriteResult[] results, RuntimeException[] errors) {
    for (int i = 0; i < batch.size(); i++) {
      PendingWrite w = batch.get(i);
      try {
        results[i] = single(w.key, w.value, w.epoch, w.version);
      } catch (RuntimeException e) {
        errors[i] = e;
      }
    }
  }

  private void sendBatch(List<PendingWrite> batch, WriteResult[] results, RuntimeException[] errors) {
    java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buffer)) {
      for (PendingWrite w : batch) {
        Frames.writeWrite(out, w.epoch, w.key, w.value, w.version);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
    }
    HttpRequest request = request("POST", HttpApi.WRITES, buffer.toByteArray());
    batchesSent.incrementAndGet();
    batchedWrites.addAndGet(batch.size());
    HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray(), "POST", HttpApi.WRITES);
    if (response.statusCode() == 404 || response.statusCode() == 405) {
      Map<String, Object> error = errorBody(response.body());
      if (HttpApi.UNKNOWN_PATH.equals(error.get("error")) || response.statusCode() == 405) {
        // A node from before batched writes: nothing was written; every write goes on its own from now on.
        LOG.info("the node at {} serves no {}: writing one key per request", hostPort, HttpApi.WRITES);
        writesUnsupported = true;
        singles(batch, results, errors);
        return;
      }
    }
    if (response.statusCode() != 200) {
      throw failure("POST", HttpApi.WRITES, response.statusCode(), errorBody(response.body()));
    }
    Frames.Reader reader = new Frames.Reader(new java.io.ByteArrayInputStream(response.body()));
    try {
      for (int i = 0; i < batch.size(); i++) {
        if (!(reader.next() instanceof Frames.ResultFrame r)) {
          throw malformedAnswer(HttpApi.WRITES, "no RESULT frame for write " + i + " of " + batch.size());
        }
        if (r.result() != null) {
          results[i] = r.result();
        } else {
          errors[i] = failure(batch.get(i).value == null ? "DELETE" : "PUT", keyPath(batch.get(i).key), r.status(),
              Map.of("error", r.code(), "message", r.message()));
        }
      }
      if (!(reader.next() instanceof Frames.EndFrame end) || end.count() != batch.size()) {
        throw malformedAnswer(HttpApi.WRITES, "no END frame counting " + batch.size() + " writes after the results");
      }
    } catch (IOException e) {
      throw malformedAnswer(HttpApi.WRITES, "a malformed answer (" + e.getMessage() + ")");
    }
  }

  private WriteResult written(HttpResponse<byte[]> response) {
    Map<String, Object> body = Json.object(new String(response.body(), UTF_8));
    if (response.statusCode() == 200) {
      return new WriteResult.Applied(number(body, "sequence"));
    }
    if (HttpApi.EPOCH_AHEAD.equals(body.get("error"))) {
      throw new StoreException.EpochAhead(String.valueOf(body.get("message")));
    }
    RingRange fenced = RingRange.of(HttpApi.parsePosition("start", string(body, "start")),
        HttpApi.parsePosition("end", string(body, "end")));
    Object reason = body.get("reason");
    if (reason == null || HttpApi.REASON_FENCED.equals(reason)) {
      return new WriteResult.RetryWithEpoch(number(body, "epoch"), fenced, WriteResult.Reason.FENCED);
    }
    if (HttpApi.REASON_NOT_A_REPLICA.equals(reason)) {
      return new WriteResult.RetryWithEpoch(number(body, "epoch"), fenced, WriteResult.Reason.NOT_A_REPLICA);
    }
    throw new StoreException("the node at " + hostPort + " answered retry-with-epoch with an unknown reason "
        + reason + "; expected " + HttpApi.REASON_FENCED + " or " + HttpApi.REASON_NOT_A_REPLICA);
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    if (key == null) {
      Checks.key(null);
    }
    HttpResponse<byte[]> response = call("GET", keyPath(key), null, 200, 404);
    if (response.statusCode() == 200) {
      return Optional.of(response.body());
    }
    Map<String, Object> error = errorBody(response.body());
    if (!HttpApi.NO_SUCH_KEY.equals(error.get("error"))) {
      throw failure("GET", keyPath(key), response.statusCode(), error);
    }
    return Optional.empty();
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    Checks.range(range);
    if (after != null && after.key() == null) {
      Checks.cursor(range, after);
    }
    String path = HttpApi.SCAN + "?versions=1&" + rangeQuery(range);
    if (after != null) {
      path += "&afterPosition=" + HttpApi.position(after.position()) + "&afterKey="
          + HexFormat.of().formatHex(after.key());
    }
    StreamConnection.Answer answer = scanStream(path);
    long sequence;
    try {
      sequence = header(answer, path, HttpApi.SEQUENCE_HEADER);
    } catch (RuntimeException e) {
      closeQuietly(answer.body());
      throw e;
    }
    return register(new RemoteScan(new FrameStream<>(answer.body(), path, f -> f instanceof Frames.EntryFrame e
        ? e.entry() : null), sequence));
  }

  @Override
  public ChangeFeed changes(RingRange range, long afterSequence) {
    Checks.range(range);
    return openFeed("GET", HttpApi.CHANGES + "?versions=1&" + rangeQuery(range) + "&after=" + afterSequence, null);
  }

  /** Opens a change feed: the frames of one streamed answer, ending at its {@code Ringshift-Up-To}. */
  private ChangeFeed openFeed(String method, String path, byte[] body) {
    HttpResponse<InputStream> response = stream(method, path, body);
    long upTo = header(response, HttpApi.UP_TO_HEADER);
    return register(new RemoteFeed(new FrameStream<>(response.body(), path, f -> f instanceof Frames.ChangeFrame c
        ? c.change() : null), upTo));
  }

  @Override
  public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
    Checks.ranges(ranges);
    if (ranges.size() == 1) {
      return changes(ranges.get(0), afterSequence);
    }
    java.nio.ByteBuffer body = java.nio.ByteBuffer.allocate(ranges.size() * HttpApi.RANGE_BYTES);
    for (RingRange r : ranges) {
      body.putLong(r.start()).putLong(r.end());
    }
    return openFeed("POST", HttpApi.CHANGES + "?versions=1&after=" + afterSequence, body.array());
  }

  @Override
  public long apply(List<Entry> entries) {
    Checks.present(entries);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(body)) {
      for (Entry e : entries) {
        Frames.writeEntry(out, e, true);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory", e);
    }
    Map<String, Object> answer = Json.object(new String(call("POST", HttpApi.APPLY, body.toByteArray(), 200).body(),
        UTF_8));
    return number(answer, "sequence");
  }

  /**
   * How much longer than the call timeout a load may take from its first byte to the node's answer: its body
   * streams as the caller hands entries over (a worker paces them with its throttle and sizes a chunk to a few
   * seconds of its limit), and the node then ingests or writes the chunk.
   */
  static final Duration LOAD_ALLOWANCE = Duration.ofSeconds(60);

  /** Whether the node serves {@code POST /v1/load}: null until the first load asked it. */
  private volatile Boolean loads;

  /**
   * Streams {@code entries} to {@code POST /v1/load} as they come, ending the body with an END frame that counts
   * them, so a body cut off in the middle is never taken for a whole one. Sent once: the body cannot be read twice.
   * An exception thrown by {@code entries} aborts the request (the node loads nothing) and is thrown here as it is.
   * The first load asks the node with an empty one whether it serves loads at all (it may be older than bulk
   * loads and answer 404 unknown-path); to a node that does not, the entries go in batched applies, as
   * {@link Store#load} does for a store without a bulk path.
   */
  @Override
  public LoadResult load(Iterator<Entry> entries) {
    if (entries == null) {
      throw new StoreException.BadRequest("entries are missing; load takes an iterator of entries (it may be empty)");
    }
    if (!servesLoads()) {
      return Store.super.load(entries);
    }
    return streamLoad(entries);
  }

  private boolean servesLoads() {
    Boolean known = loads;
    if (known == null) {
      ByteArrayOutputStream end = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(end)) {
        Frames.writeEnd(out, 0);
      } catch (IOException e) {
        throw new UncheckedIOException("writing to memory", e);
      }
      HttpResponse<byte[]> answer = call("POST", HttpApi.LOAD, end.toByteArray(), 200, 404);
      known = answer.statusCode() == 200;
      if (!known && !HttpApi.UNKNOWN_PATH.equals(errorBody(answer.body()).get("error"))) {
        throw failure("POST", HttpApi.LOAD, 404, errorBody(answer.body()));
      }
      loads = known;
    }
    return known;
  }

  private LoadResult streamLoad(Iterator<Entry> entries) {
    if (closed) {
      throw new StoreException.Unavailable("the remote store for the node at " + hostPort + " is closed", null);
    }
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    headers.put("Content-Type", HttpApi.FRAMES_TYPE);
    if (secret != null) {
      headers.put("Authorization", secret.authorization());
    }
    Duration deadline = timeout.plus(LOAD_ALLOWANCE);
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    StreamConnection.Answer answer;
    try {
      answer = StreamConnection.post(address(), base.getPort(), HttpApi.LOAD, headers, timeout, deadline, WATCHDOG,
          body -> writeLoad(entries, new DataOutputStream(body), failure));
    } catch (IOException e) {
      if (failure.get() != null) {
        throw failure.get();
      }
      if (e instanceof HttpTimeoutException && !(e instanceof HttpConnectTimeoutException)) {
        throw new StoreException.Unavailable("the node at " + hostPort + " is unreachable (POST " + HttpApi.LOAD
            + "): no answer within " + deadline.toMillis() + " ms of the load's start", e);
      }
      throw unreachable("POST", HttpApi.LOAD, e);
    }
    byte[] bytes;
    try (InputStream in = answer.body()) {
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw unreachable("POST", HttpApi.LOAD, e);
    }
    if (answer.status() != 200) {
      throw failure("POST", HttpApi.LOAD, answer.status(), errorBody(bytes));
    }
    Map<String, Object> result = Json.object(new String(bytes, UTF_8));
    if (!(result.get("ingested") instanceof Boolean ingested)) {
      throw malformedAnswer(HttpApi.LOAD, "no ingested flag");
    }
    return new LoadResult(number(result, "entries"), number(result, "bytes"), ingested, number(result, "sequence"));
  }

  /**
   * Writes the frames of a load body: an ENTRY per entry, then END with their count. What the entries throw is kept
   * in {@code failure} and ends the body without its END frame, so the node loads nothing of it.
   */
  private static void writeLoad(Iterator<Entry> entries, DataOutputStream out,
      AtomicReference<RuntimeException> failure) throws IOException {
    long count = 0;
    try {
      while (entries.hasNext()) {
        Entry e = entries.next();
        if (e == null) {
          throw new StoreException.BadRequest("entry " + count + " of a load is null; a load takes entries with a key");
        }
        // The node checks every entry (positions, limits, no deletions); a bad one fails the load there.
        Frames.writeEntry(out, e, true);
        count++;
      }
    } catch (RuntimeException e) {
      failure.set(e);
      throw new IOException("the entries of a load failed after " + count + ": " + e, e);
    }
    Frames.writeEnd(out, count);
    out.flush();
  }

  /** The node's host as a socket address takes it: an IPv6 address without its brackets. */
  private String address() {
    String host = base.getHost();
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  @Override
  public RangeDigest digest(RingRange range) {
    Checks.range(range);
    Map<String, Object> d = Json.object(new String(call("GET", HttpApi.DIGEST + "?" + rangeQuery(range), null, 200)
        .body(), UTF_8));
    return new RangeDigest(HexFormat.of().parseHex(string(d, "digest")), number(d, "keys"), number(d, "bytes"),
        number(d, "sequence"));
  }


  @Override
  public Fence fence(RingRange range, long epoch) {
    Checks.range(range);
    String path = HttpApi.FENCES + "?" + rangeQuery(range) + "&epoch=" + epoch;
    return fence(Json.object(new String(call("POST", path, null, 200).body(), UTF_8)));
  }

  @Override
  public List<Fence> fences() {
    Map<String, Object> body = Json.object(new String(call("GET", HttpApi.FENCES, null, 200).body(), UTF_8));
    List<Fence> fences = new ArrayList<>();
    if (!(body.get("fences") instanceof List<?> list)) {
      throw malformedAnswer(HttpApi.FENCES, "no fences list");
    }
    for (Object item : list) {
      if (!(item instanceof Map<?, ?> map)) {
        throw malformedAnswer(HttpApi.FENCES, "a fence is not an object");
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> fence = (Map<String, Object>) map;
      fences.add(fence(fence));
    }
    return fences;
  }

  private Fence fence(Map<String, Object> f) {
    return new Fence(RingRange.of(HttpApi.parsePosition("start", string(f, "start")),
        HttpApi.parsePosition("end", string(f, "end"))), number(f, "epoch"), number(f, "position"));
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    Checks.range(range);
    call("DELETE", HttpApi.FENCES + "?" + rangeQuery(range) + "&epoch=" + epoch, null, 204);
  }

  @Override
  public long deleteRange(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    Map<String, Object> body = Json.object(new String(call("DELETE", HttpApi.RANGE + "?" + rangeQuery(range)
        + "&epoch=" + epoch, null, 200).body(), UTF_8));
    return number(body, "deleted");
  }

  /** Marks the client closed and ends the scans and feeds it still has open; the node is not affected. */
  @Override
  public void close() {
    closed = true;
    for (Stream stream : List.copyOf(streams)) {
      stream.abort();
    }
    streams.clear();
    synchronized (this) {
      if (watchdog != null) {
        watchdog.cancel(false);
      }
    }
  }

  @Override
  public String toString() {
    return "RemoteStore[" + hostPort + "]";
  }

  // ---- requests

  private static String keyPath(byte[] key) {
    return HttpApi.KEYS + HexFormat.of().formatHex(key);
  }

  private static String rangeQuery(RingRange range) {
    return "start=" + HttpApi.position(range.start()) + "&end=" + HttpApi.position(range.end());
  }

  private HttpRequest request(String method, String path, byte[] body) {
    if (closed) {
      throw new StoreException.Unavailable("the remote store for the node at " + hostPort + " is closed", null);
    }
    HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
        .timeout(timeout)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    if (secret != null) {
      request.header("Authorization", secret.authorization());
    }
    return request.build();
  }

  /** Sends a small request; any status outside {@code expected} becomes the matching exception. */
  private HttpResponse<byte[]> call(String method, String path, byte[] body, int... expected) {
    HttpResponse<byte[]> response = send(request(method, path, body), HttpResponse.BodyHandlers.ofByteArray(), method,
        path);
    for (int status : expected) {
      if (response.statusCode() == status) {
        return response;
      }
    }
    throw failure(method, path, response.statusCode(), errorBody(response.body()));
  }

  /**
   * Opens a scan's answer on a connection of its own ({@link StreamConnection}: the JDK client's read path was the
   * largest cost of a copy's worker), once more when the connection broke as with {@link #send}; a status other
   * than 200 becomes the matching exception.
   */
  private StreamConnection.Answer scanStream(String path) {
    if (closed) {
      throw new StoreException.Unavailable("the remote store for the node at " + hostPort + " is closed", null);
    }
    Map<String, String> headers = secret == null ? Map.of() : Map.of("Authorization", secret.authorization());
    String address = address();
    StreamConnection.Answer answer;
    for (int attempt = 1; ; attempt++) {
      try {
        answer = StreamConnection.get(address, base.getPort(), path, headers, timeout);
        break;
      } catch (IOException e) {
        boolean brokenConnection = !(e instanceof HttpTimeoutException) && !(e instanceof ConnectException);
        if (attempt > 1 || !brokenConnection) {
          throw unreachable("GET", path, e);
        }
        LOG.debug("GET {} on {} failed on a broken connection, sending once more: {}", pathOnly(path), hostPort,
            e.toString());
      }
    }
    if (answer.status() == 200) {
      return answer;
    }
    throw failure("GET", path, answer.status(), answer.body());
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException e) {
      // closing a socket: nothing to do about it
    }
  }

  private HttpResponse<InputStream> stream(String method, String path, byte[] body) {
    HttpResponse<InputStream> response = send(request(method, path, body), HttpResponse.BodyHandlers.ofInputStream(),
        method, path);
    if (response.statusCode() == 200) {
      return response;
    }
    throw failure(method, path, response.statusCode(), response.body());
  }

  /** The error of a streamed answer whose status is not 200, from its body (up to 1 MiB of it), which it closes. */
  private StoreException failure(String method, String path, int status, InputStream body) {
    byte[] errorBytes;
    try (InputStream in = body) {
      errorBytes = in.readNBytes(1024 * 1024);
    } catch (IOException e) {
      throw unreachable(method, path, e);
    }
    return failure(method, path, status, errorBody(errorBytes));
  }

  /**
   * Sends once, and once more when the connection broke without a timeout or a refusal: a pooled keep-alive
   * connection the node closed while idle fails that way. Migration's calls (reads, scans, feeds, apply, digest,
   * fence, range delete) are idempotent, so a repeat is safe even when the first attempt reached the node. A
   * client's put or delete of a key is not repeated: if the first attempt did land, a repeat could overwrite a
   * newer write another client made in between, so the caller gets {@code Unavailable} and decides.
   */
  private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler, String method,
      String path) {
    for (int attempt = 1; ; attempt++) {
      try {
        return client.send(request, handler);
      } catch (IOException e) {
        boolean brokenConnection = !(e instanceof HttpTimeoutException) && !(e instanceof ConnectException);
        boolean clientWrite = (path.startsWith(HttpApi.KEYS) && !"GET".equals(method)) || path.equals(HttpApi.WRITES);
        if (attempt > 1 || !brokenConnection || clientWrite) {
          throw unreachable(method, path, e);
        }
        LOG.debug("{} {} on {} failed on a broken connection, sending once more: {}", method, pathOnly(path), hostPort,
            e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreException.Unavailable("interrupted while calling the node at " + hostPort, e);
      }
    }
  }

  StoreException.Unavailable unreachable(String method, String path, IOException e) {
    String why;
    if (e instanceof HttpConnectTimeoutException) {
      why = "no connection within " + timeout.toMillis() + " ms";
    } else if (e instanceof HttpTimeoutException) {
      why = "no answer within " + timeout.toMillis() + " ms";
    } else if (e instanceof ConnectException) {
      why = "connection refused";
    } else {
      why = e.getMessage() == null ? e.toString() : e.getMessage();
    }
    return new StoreException.Unavailable("the node at " + hostPort + " is unreachable (" + method + " "
        + pathOnly(path) + "): " + why, e);
  }

  private static String pathOnly(String path) {
    int q = path.indexOf('?');
    String p = q < 0 ? path : path.substring(0, q);
    return p.length() > 60 ? p.substring(0, 60) + "..." : p;
  }

  private StoreException failure(String method, String path, int status, Map<String, Object> error) {
    String message = String.valueOf(error.getOrDefault("message", "(no message)"));
    return switch (status) {
      case 400 -> new StoreException.BadRequest(message);
      case 401 -> new StoreException.Unauthorized("the node at " + hostPort + " refused " + method + " "
          + pathOnly(path) + ": " + message);
      case 404 -> HttpApi.ADMIN_ENDPOINT.equals(error.get("error"))
          ? new StoreException.Unauthorized("the node at " + hostPort + " refused " + method + " " + pathOnly(path)
              + ": " + message)
          : new StoreException("the node at " + hostPort + " answered 404 to " + method + " " + pathOnly(path) + ": "
              + message);
      case 410 -> new StoreException.FeedUnavailable(message);
      case 409 -> HttpApi.REFUSED.equals(error.get("error")) ? new StoreException.Refused(message)
          : HttpApi.EPOCH_AHEAD.equals(error.get("error")) ? new StoreException.EpochAhead(message)
          : new StoreException("the node at " + hostPort + " answered 409 to " + method + " " + pathOnly(path) + ": "
              + message);
      case 503 -> new StoreException.Unavailable("the node at " + hostPort + ": " + message, null);
      default -> new StoreException("the node at " + hostPort + " answered " + status + " to " + method + " "
          + pathOnly(path) + ": " + message);
    };
  }

  private static Map<String, Object> errorBody(byte[] body) {
    String text = new String(body, UTF_8);
    try {
      return Json.object(text);
    } catch (IllegalArgumentException e) {
      return Map.of("message", text.isBlank() ? "(empty answer)" : HttpApi.shorten(text));
    }
  }

  private long header(StreamConnection.Answer answer, String path, String name) {
    String value = answer.headers().get(name.toLowerCase(java.util.Locale.ROOT));
    if (value == null) {
      throw new StoreException("the answer from " + base.resolve(path) + " has no " + name + " header");
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw malformedAnswer(pathOnly(path), "a " + name + " header that is not a number: " + value);
    }
  }

  private static long header(HttpResponse<?> response, String name) {
    String value = response.headers().firstValue(name).orElse(null);
    if (value == null) {
      throw new StoreException("the answer from " + response.uri() + " has no " + name + " header");
    }
    return Long.parseLong(value);
  }

  private StoreException malformedAnswer(String path, String what) {
    return new StoreException("the node at " + hostPort + " answered " + path + " with " + what);
  }

  private String string(Map<String, Object> body, String field) {
    if (!(body.get(field) instanceof String s)) {
      throw malformedAnswer(pathOnly(body.toString()), "no string field '" + field + "'");
    }
    return s;
  }

  private long number(Map<String, Object> body, String field) {
    if (!(body.get(field) instanceof Long n)) {
      throw malformedAnswer(HttpApi.shorten(body.toString()), "no number field '" + field + "'");
    }
    return n;
  }

  private <T extends Stream> T register(T stream) {
    streams.add(stream);
    startWatchdog();
    if (closed) {
      stream.abort();
    }
    return stream;
  }

  /** Starts the idle-timeout watchdog once; it checks the streams four times per timeout (10 ms to 1 s apart). */
  private synchronized void startWatchdog() {
    if (watchdog != null || closed) {
      return;
    }
    long period = Math.max(10, Math.min(1_000, timeout.toMillis() / 4));
    watchdog = WATCHDOG.scheduleWithFixedDelay(this::abortStalledStreams, period, period, TimeUnit.MILLISECONDS);
  }

  /** Aborts every stream whose read has waited for the body longer than the timeout. */
  private void abortStalledStreams() {
    long now = System.nanoTime();
    for (Stream stream : streams) {
      try {
        stream.abortIfStalled(now, timeout.toNanos());
      } catch (RuntimeException e) {
        LOG.warn("checking a stream from {} for the idle timeout failed", hostPort, e);
      }
    }
  }

  // ---- streams

  /**
   * Where a stream stands: reading, at its END frame, closed by its reader, cut off by the client's close, or cut
   * off by the watchdog because no data arrived within the timeout.
   */
  private enum StreamState { OPEN, ENDED, CLOSED, ABORTED, STALLED }

  /** A body stream that records since when a read has been waiting for bytes ({@link #IDLE}: no read waits). */
  private static final class WatchedInputStream extends java.io.FilterInputStream {
    static final long IDLE = Long.MIN_VALUE;
    private volatile long waitingSince = IDLE;

    WatchedInputStream(InputStream in) {
      super(in);
    }

    long waitingSince() {
      return waitingSince;
    }

    @Override
    public int read() throws IOException {
      waitingSince = System.nanoTime();
      try {
        return super.read();
      } finally {
        waitingSince = IDLE;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      waitingSince = System.nanoTime();
      try {
        return super.read(b, off, len);
      } finally {
        waitingSince = IDLE;
      }
    }

    @Override
    public long skip(long n) throws IOException {
      waitingSince = System.nanoTime();
      try {
        return super.skip(n);
      } finally {
        waitingSince = IDLE;
      }
    }
  }

  /** Decodes a frame stream into items; END finishes it, ERROR and a cut-off stream throw. */
  private final class FrameStream<T> implements Iterator<T> {
    private final WatchedInputStream body;
    private final Frames.Reader reader;
    private final String path;
    private final Function<Frames.Frame, T> item;
    private volatile StreamState state = StreamState.OPEN;
    private T next;
    private long count;

    FrameStream(InputStream body, String path, Function<Frames.Frame, T> item) {
      this.body = new WatchedInputStream(body);
      this.reader = new Frames.Reader(new BufferedInputStream(this.body, 64 * 1024));
      this.path = path;
      this.item = item;
    }

    @Override
    public boolean hasNext() {
      if (next != null) {
        return true;
      }
      switch (state) {
        case ENDED -> {
          return false;
        }
        case CLOSED -> throw new IllegalStateException("the stream is closed");
        case ABORTED, STALLED -> throw cutOff(null);
        default -> {
          // OPEN: read on.
        }
      }
      Frames.Frame frame;
      try {
        frame = reader.next();
      } catch (Frames.MalformedFrameException e) {
        end(StreamState.ENDED);
        if (state == StreamState.ABORTED || state == StreamState.STALLED) {
          throw cutOff(e);
        }
        throw new StoreException("the stream from the node at " + hostPort + " is malformed: " + e.getMessage(), e);
      } catch (IOException e) {
        end(StreamState.ENDED);
        if (state == StreamState.ABORTED || state == StreamState.STALLED) {
          throw cutOff(e);
        }
        throw unreachable("GET", path, e);
      }
      if (frame == null) {
        end(StreamState.ENDED);
        if (state == StreamState.ABORTED || state == StreamState.STALLED) {
          throw cutOff(null);
        }
        throw new StoreException.Unavailable("the stream from the node at " + hostPort + " (" + pathOnly(path)
            + ") ended after " + count + " frames without its end frame", null);
      }
      if (frame instanceof Frames.EndFrame end) {
        end(StreamState.ENDED);
        if (end.count() != count) {
          throw new StoreException("the stream from the node at " + hostPort + " ended claiming " + end.count()
              + " frames after " + count);
        }
        return false;
      }
      if (frame instanceof Frames.ErrorFrame error) {
        end(StreamState.ENDED);
        throw failure("GET", path, error.status(), Map.of("message", error.message()));
      }
      next = item.apply(frame);
      if (next == null) {
        end(StreamState.ENDED);
        throw new StoreException("the stream from the node at " + hostPort + " sent an unexpected "
            + frame.getClass().getSimpleName());
      }
      count++;
      return true;
    }

    /** The error of a stream the client's close or the watchdog cut off. */
    private StoreException.Unavailable cutOff(IOException cause) {
      if (state == StreamState.STALLED) {
        return new StoreException.Unavailable("the stream from the node at " + hostPort + " (GET " + pathOnly(path)
            + ") stalled: no data arrived for " + timeout.toMillis() + " ms", cause);
      }
      return new StoreException.Unavailable("the remote store for the node at " + hostPort
          + " was closed while this stream was open", cause);
    }

    /** Aborts the stream when a read has waited for the body longer than {@code timeoutNanos}. */
    void abortIfStalled(long nowNanos, long timeoutNanos) {
      long since = body.waitingSince();
      if (since != WatchedInputStream.IDLE && nowNanos - since > timeoutNanos && state == StreamState.OPEN) {
        LOG.debug("the stream {} from {} got no data for {} ms; aborting it", pathOnly(path), hostPort,
            timeout.toMillis());
        end(StreamState.STALLED);
      }
    }

    @Override
    public T next() {
      if (!hasNext()) {
        throw new NoSuchElementException("the stream has no more items");
      }
      T t = next;
      next = null;
      return t;
    }

    /**
     * Ends the stream in {@code how} unless it already ended; closing the body before its end cancels the
     * response, and the client drops that connection instead of reusing it.
     */
    void end(StreamState how) {
      synchronized (this) {
        if (state != StreamState.OPEN) {
          return;
        }
        state = how;
      }
      next = null;
      try {
        body.close();
      } catch (IOException e) {
        LOG.debug("closing the stream {} from {}: {}", pathOnly(path), hostPort, e.toString());
      }
    }
  }

  /** A scan or feed this client hands out, closed by the client's own close. */
  private interface Stream extends AutoCloseable {
    void abort();

    void abortIfStalled(long nowNanos, long timeoutNanos);

    @Override
    void close();
  }

  /** The frames of one response as an iterator that the client can abort; a scan or a feed adds its header. */
  private abstract class RemoteStream<T> implements java.util.Iterator<T>, Stream {
    private final FrameStream<T> frames;

    RemoteStream(FrameStream<T> frames) {
      this.frames = frames;
    }

    @Override
    public boolean hasNext() {
      return frames.hasNext();
    }

    @Override
    public T next() {
      return frames.next();
    }

    @Override
    public void close() {
      frames.end(StreamState.CLOSED);
      streams.remove(this);
    }

    @Override
    public void abort() {
      frames.end(StreamState.ABORTED);
    }

    @Override
    public void abortIfStalled(long nowNanos, long timeoutNanos) {
      frames.abortIfStalled(nowNanos, timeoutNanos);
    }
  }

  private final class RemoteScan extends RemoteStream<Entry> implements RangeScan {
    private final long sequence;

    RemoteScan(FrameStream<Entry> frames, long sequence) {
      super(frames);
      this.sequence = sequence;
    }

    @Override
    public long sequence() {
      return sequence;
    }
  }

  private final class RemoteFeed extends RemoteStream<Change> implements ChangeFeed {
    private final long upTo;

    RemoteFeed(FrameStream<Change> frames, long upTo) {
      super(frames);
      this.upTo = upTo;
    }

    @Override
    public long upTo() {
      return upTo;
    }
  }
}
