package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.ringshift.ring.RingRange;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.OwnershipCheckedStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.storage.internal.Checks;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a {@link Store} over HTTP/1.1 (docs/storage.md, "The HTTP API").
 *
 * <p>Design note. Small calls answer JSON; scans and change feeds answer a chunked stream of binary frames
 * ({@link Frames}) written as the store's iterator yields them, so a stream holds one entry and one buffer in
 * memory and TCP flow control paces the server to the client: a client that stops reading stops the scan.
 * Errors before a stream starts are JSON bodies with an HTTP status; an error after it started (the store closed
 * under it) is an ERROR frame. Every request is answered or its connection closed: a malformed request gets a
 * 4xx and a message, and nothing a client sends can end the server.
 */
public final class NodeHandler implements HttpHandler {
  private static final Logger LOG = LoggerFactory.getLogger(NodeHandler.class);
  private static final int STREAM_BUFFER = 64 * 1024;
  /** How much of a refused body the server reads away so the client still gets the answer, not a reset. */
  private static final long DRAIN_LIMIT = Store.MAX_APPLY_BYTES + 16L * 1024 * 1024;

  /** Which of a node's two listeners a handler serves (docs/storage.md, "Two listeners"). */
  public enum Listener {
    /** Health and the key API ({@code GET}/{@code PUT}/{@code DELETE /v1/keys/KEY}): what clients use. */
    CLIENT,
    /** Every endpoint, each only with the admin secret: what workers use. */
    ADMIN
  }

  private final Store store;
  private final Listener listener;
  private final AdminSecret secret;
  private final IntSupplier otherPort;
  private final NodeMetrics metrics;

  /** A handler serving every endpoint without authentication (tests of the API itself). */
  public NodeHandler(Store store) {
    this(store, Listener.ADMIN, null, () -> -1, NodeMetrics.none(store));
  }

  /**
   * @param secret the admin secret every request must carry on {@link Listener#ADMIN}; null: none checked (tests)
   * @param otherPort the port of the node's other listener, named in refusals
   * @param metrics where the answers are counted; both listeners of a node share one
   */
  public NodeHandler(Store store, Listener listener, AdminSecret secret, IntSupplier otherPort, NodeMetrics metrics) {
    this.store = store;
    this.listener = listener;
    this.secret = secret;
    this.otherPort = otherPort;
    this.metrics = metrics;
  }

  /** A request whose method, path or parameters the API does not know. */
  private static final class Refusal extends RuntimeException {
    final int status;
    final String code;

    Refusal(int status, String code, String message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** One request being answered. */
  private static final class Call {
    final HttpExchange exchange;
    final String method;
    final String path;
    final Map<String, String> query;
    boolean streaming;

    Call(HttpExchange exchange) {
      this.exchange = exchange;
      this.method = exchange.getRequestMethod();
      this.path = exchange.getRequestURI().getRawPath();
      this.query = parseQuery(exchange.getRequestURI().getRawQuery());
    }

    /** The query, refusing parameters this endpoint does not take. */
    Map<String, String> params(Set<String> allowed) {
      for (String name : query.keySet()) {
        if (!allowed.contains(name)) {
          throw new StoreException.BadRequest("unknown parameter '" + HttpApi.shorten(name) + "' for " + method + " "
              + path + "; it takes " + String.join(", ", allowed.stream().sorted().toList()));
        }
      }
      return query;
    }

    String required(String name) {
      String value = query.get(name);
      if (value == null) {
        throw new StoreException.BadRequest("parameter '" + name + "' is missing for " + method + " " + path);
      }
      return value;
    }
  }

  @Override
  public void handle(HttpExchange exchange) {
    Call call = null;
    try {
      call = new Call(exchange);
      route(call);
    } catch (IOException e) {
      // The client went away (or sent a body that ended early); nothing can be answered on this connection.
      LOG.debug("{} {}: connection failed: {}", exchange.getRequestMethod(), exchange.getRequestURI(), e.toString());
    } catch (RuntimeException e) {
      fail(exchange, call, e);
    } finally {
      exchange.close();
    }
  }

  /** The HTTP status and error code an exception is answered with. */
  private record Outcome(int status, String code) {}

  private static Outcome outcome(RuntimeException e) {
    int status;
    String code;
    if (e instanceof Refusal r) {
      status = r.status;
      code = r.code;
    } else if (e instanceof StoreException.BadRequest) {
      status = 400;
      code = HttpApi.BAD_REQUEST;
    } else if (e instanceof StoreException.EpochAhead) {
      status = 409;
      code = HttpApi.EPOCH_AHEAD;
    } else if (e instanceof StoreException.Refused) {
      status = 409;
      code = HttpApi.REFUSED;
    } else if (e instanceof StoreException.FeedUnavailable) {
      status = 410;
      code = HttpApi.FEED_UNAVAILABLE;
    } else if (e instanceof StoreException.Unavailable) {
      status = 503;
      code = HttpApi.UNAVAILABLE;
    } else if (e instanceof StoreException) {
      status = 500;
      code = HttpApi.STORE_ERROR;
    } else {
      status = 500;
      code = HttpApi.INTERNAL;
    }
    return new Outcome(status, code);
  }

  private void fail(HttpExchange exchange, Call call, RuntimeException e) {
    Outcome outcome = outcome(e);
    int status = outcome.status();
    String code = outcome.code();
    metrics.failed(code);
    if (code.equals(HttpApi.STORE_ERROR)) {
      LOG.warn("{} {} failed in the store", exchange.getRequestMethod(), exchange.getRequestURI(), e);
    } else if (code.equals(HttpApi.INTERNAL)) {
      LOG.error("{} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
    }
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    try {
      if (call != null && call.streaming) {
        DataOutputStream out = new DataOutputStream(exchange.getResponseBody());
        Frames.writeError(out, status, message);
        out.flush();
      } else {
        drain(exchange);
        json(exchange, status, error(code, message));
      }
    } catch (IOException io) {
      LOG.debug("could not send the {} answer: {}", status, io.toString());
    }
  }

  private void route(Call call) throws IOException {
    String path = call.path;
    if (listener == Listener.ADMIN && secret != null
        && !secret.matches(call.exchange.getRequestHeaders().getFirst("Authorization"))) {
      call.exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"ringshift-node-admin\"");
      boolean given = call.exchange.getRequestHeaders().containsKey("Authorization");
      throw new Refusal(401, HttpApi.UNAUTHORIZED, call.method + " " + HttpApi.shorten(path) + " refused, nothing "
          + "changed: this is the node's admin listener, and the request carried " + (given ? "a wrong admin secret"
          : "no admin secret") + "; send 'Authorization: Bearer <secret>' with the secret of the nodes' "
          + "--admin-secret-file (workers: --node-secret-file)");
    }
    if (listener == Listener.CLIENT && !path.equals(HttpApi.HEALTH) && !path.startsWith(HttpApi.KEYS)
        && !path.equals(HttpApi.WRITES)) {
      if (ADMIN_PATHS.contains(path)) {
        int admin = otherPort.getAsInt();
        throw new Refusal(404, HttpApi.ADMIN_ENDPOINT, call.method + " " + path + " is not served on the client "
            + "port: it is a migration and admin endpoint, served on the node's admin listener" + (admin > 0
            ? " (port " + admin + ")" : "") + " to requests that carry the admin secret (docs/storage.md, \"Two "
            + "listeners\"); this port serves /health, /v1/keys/KEY and /v1/writes");
      }
      throw new Refusal(404, HttpApi.UNKNOWN_PATH, "no endpoint " + call.method + " " + HttpApi.shorten(path)
          + "; this client port serves /health, /v1/keys/KEY and /v1/writes; the other endpoints are on the node's "
          + "admin listener (docs/storage.md)");
    }
    if (path.equals(HttpApi.HEALTH)) {
      only(call, "GET");
      health(call);
    } else if (path.equals(HttpApi.WRITES)) {
      only(call, "POST");
      writes(call);
    } else if (path.startsWith(HttpApi.KEYS)) {
      byte[] key = HttpApi.parseHex("key", path.substring(HttpApi.KEYS.length()));
      switch (call.method) {
        case "GET" -> get(call, key);
        case "PUT" -> put(call, key);
        case "DELETE" -> delete(call, key);
        default -> throw notAllowed(call, "GET, PUT, DELETE");
      }
    } else {
      switch (path) {
        case HttpApi.SCAN -> {
          only(call, "GET");
          scan(call);
        }
        case HttpApi.CHANGES -> {
          switch (call.method) {
            case "GET" -> changes(call);
            case "POST" -> changesOfRanges(call);
            default -> throw notAllowed(call, "GET, POST");
          }
        }
        case HttpApi.APPLY -> {
          only(call, "POST");
          apply(call);
        }
        case HttpApi.LOAD -> {
          only(call, "POST");
          load(call);
        }
        case HttpApi.DIGEST -> {
          only(call, "GET");
          digest(call);
        }
        case HttpApi.FENCES -> {
          switch (call.method) {
            case "GET" -> fences(call);
            case "POST" -> fence(call);
            case "DELETE" -> unfence(call);
            default -> throw notAllowed(call, "GET, POST, DELETE");
          }
        }
        case HttpApi.RANGE -> {
          only(call, "DELETE");
          deleteRange(call);
        }
        default -> throw new Refusal(404, HttpApi.UNKNOWN_PATH, "no endpoint " + call.method + " "
            + HttpApi.shorten(path) + "; this node serves /health and /v1/{keys/KEY,writes,scan,changes,apply,"
            + "load,digest,fences,range} (docs/storage.md)");
      }
    }
  }

  /** The endpoints only the admin listener serves. */
  private static final Set<String> ADMIN_PATHS = Set.of(HttpApi.SCAN, HttpApi.CHANGES, HttpApi.APPLY, HttpApi.LOAD,
      HttpApi.DIGEST, HttpApi.FENCES, HttpApi.RANGE);

  private static void only(Call call, String method) {
    if (!call.method.equals(method)) {
      throw notAllowed(call, method);
    }
  }

  private static Refusal notAllowed(Call call, String allowed) {
    call.exchange.getResponseHeaders().set("Allow", allowed);
    return new Refusal(405, HttpApi.METHOD_NOT_ALLOWED, call.method + " is not allowed on " + call.path
        + "; use " + allowed);
  }

  // ---- endpoints

  private void health(Call call) throws IOException {
    call.params(Set.of());
    Store.NodeInfo info = store.info();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("nodeId", info.nodeId());
    body.put("zone", info.zone());
    body.put("latestSequence", info.latestSequence());
    body.put("keys", info.keys());
    body.put("incarnation", info.incarnation());
    body.put("fences", store.fences().size());
    if (store instanceof OwnershipCheckedStore checked) {
      // The ring this node routes by: what a dashboard shows as the epoch each node reports.
      body.put("ringEpoch", checked.ringEpoch());
    }
    body.put("api", "v1");
    json(call.exchange, 200, body);
  }

  private void get(Call call, byte[] key) throws IOException {
    call.params(Set.of());
    Optional<byte[]> value = store.get(key);
    metrics.read(value.isPresent());
    if (value.isEmpty()) {
      json(call.exchange, 404, error(HttpApi.NO_SUCH_KEY, "the store holds no key " + Checks.preview(key)));
      return;
    }
    call.exchange.getResponseHeaders().set("Content-Type", HttpApi.BYTES_TYPE);
    send(call.exchange, 200, value.get());
  }

  private void put(Call call, byte[] key) throws IOException {
    call.params(Set.of("epoch", "version"));
    long epoch = HttpApi.parseNumber("epoch", call.required("epoch"));
    Version version = HttpApi.parseVersion(call.query.get("version"));
    byte[] value = readValue(call.exchange);
    WriteResult result = version == null ? store.put(key, value, epoch) : store.put(key, value, epoch, version);
    metrics.written(false, result);
    written(call, result);
  }

  private void delete(Call call, byte[] key) throws IOException {
    call.params(Set.of("epoch", "version"));
    long epoch = HttpApi.parseNumber("epoch", call.required("epoch"));
    Version version = HttpApi.parseVersion(call.query.get("version"));
    WriteResult result = version == null ? store.delete(key, epoch) : store.delete(key, epoch, version);
    metrics.written(true, result);
    written(call, result);
  }

  /**
   * A batch of client writes (docs/storage.md, "Batched writes"): read and checked whole first (a malformed or
   * oversized body is refused with 400 and nothing applied), then each applied in order as its own PUT or DELETE
   * would be, each answered with a RESULT frame: applied, retry with an epoch, or the error its single request would
   * have been answered with.
   */
  private void writes(Call call) throws IOException {
    call.params(Set.of());
    List<Frames.WriteFrame> writes = readWrites(call.exchange.getRequestBody());
    java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream(16 + 16 * writes.size());
    DataOutputStream out = new DataOutputStream(buffer);
    for (Frames.WriteFrame w : writes) {
      try {
        WriteResult result;
        if (w.version() == null) {
          result = w.value() == null ? store.delete(w.key(), w.epoch()) : store.put(w.key(), w.value(), w.epoch());
        } else {
          result = w.value() == null ? store.delete(w.key(), w.epoch(), w.version())
              : store.put(w.key(), w.value(), w.epoch(), w.version());
        }
        metrics.written(w.value() == null, result);
        Frames.writeResult(out, result);
      } catch (RuntimeException e) {
        Outcome outcome = outcome(e);
        metrics.failed(outcome.code());
        if (outcome.status() >= 500) {
          LOG.warn("a write of {} {} failed", call.method, call.path, e);
        }
        Frames.writeFailed(out, outcome.status(), outcome.code(), e.getMessage() == null ? e.toString()
            : e.getMessage());
      }
    }
    Frames.writeEnd(out, writes.size());
    out.flush();
    call.exchange.getResponseHeaders().set("Content-Type", HttpApi.FRAMES_TYPE);
    send(call.exchange, 200, buffer.toByteArray());
  }

  private static List<Frames.WriteFrame> readWrites(InputStream body) throws IOException {
    Frames.Reader reader = new Frames.Reader(new BufferedInputStream(body, STREAM_BUFFER));
    List<Frames.WriteFrame> writes = new ArrayList<>();
    long bytes = 0;
    try {
      for (Frames.Frame frame = reader.next(); frame != null; frame = reader.next()) {
        if (!(frame instanceof Frames.WriteFrame write)) {
          throw new StoreException.BadRequest("writes body frame " + writes.size() + " is "
              + frame.getClass().getSimpleName() + "; a writes body holds WRITE frames only; nothing was written");
        }
        if (writes.size() == HttpApi.MAX_WRITE_BATCH) {
          throw new StoreException.BadRequest("a writes body of more than " + HttpApi.MAX_WRITE_BATCH + " writes; a "
              + "batch holds at most " + HttpApi.MAX_WRITE_BATCH + ": split it; nothing was written");
        }
        bytes += write.size();
        if (bytes > HttpApi.MAX_WRITE_BATCH_BYTES) {
          throw new StoreException.BadRequest("a writes body of more than " + HttpApi.MAX_WRITE_BATCH_BYTES
              + " bytes of keys and values (at write " + writes.size() + "); a batch holds at most that: split it; "
              + "nothing was written");
        }
        writes.add(write);
      }
    } catch (Frames.MalformedFrameException e) {
      throw new StoreException.BadRequest("writes body: " + e.getMessage() + "; nothing was written");
    }
    return writes;
  }

  private static void written(Call call, WriteResult result) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    if (result instanceof WriteResult.Applied applied) {
      body.put("applied", true);
      body.put("sequence", applied.sequence());
      json(call.exchange, 200, body);
    } else {
      WriteResult.RetryWithEpoch retry = (WriteResult.RetryWithEpoch) result;
      boolean fenced = retry.reason() == WriteResult.Reason.FENCED;
      body.put("error", HttpApi.RETRY_WITH_EPOCH);
      body.put("epoch", retry.epoch());
      body.put("reason", fenced ? HttpApi.REASON_FENCED : HttpApi.REASON_NOT_A_REPLICA);
      body.put("start", HttpApi.position(retry.fencedRange().start()));
      body.put("end", HttpApi.position(retry.fencedRange().end()));
      body.put("message", fenced
          ? "the key's range " + retry.fencedRange() + " is fenced for epochs below " + retry.epoch()
              + "; refresh the ring to that epoch and write to the owners it names"
          : "this node is not a replica of the key's range " + retry.fencedRange() + " in the ring of epoch "
              + retry.epoch() + " it routes by; refresh the ring to that epoch and write to the replicas it names");
      json(call.exchange, 409, body);
    }
  }

  private void scan(Call call) throws IOException {
    call.params(Set.of("start", "end", "afterPosition", "afterKey", "versions"));
    boolean versioned = versioned(call);
    RingRange range = range(call);
    String afterPosition = call.query.get("afterPosition");
    String afterKey = call.query.get("afterKey");
    Store.Cursor cursor = null;
    if (afterPosition != null || afterKey != null) {
      if (afterPosition == null || afterKey == null) {
        throw new StoreException.BadRequest("a cursor needs both afterPosition and afterKey (afterKey may be empty)");
      }
      cursor = new Store.Cursor(HttpApi.parsePosition("afterPosition", afterPosition),
          HttpApi.parseHex("afterKey", afterKey));
    }
    try (RangeScan scan = store.scan(range, cursor)) {
      DataOutputStream out = startStream(call, HttpApi.SEQUENCE_HEADER, scan.sequence());
      long count = 0;
      while (scan.hasNext()) {
        Entry e = scan.next();
        if (versioned || !e.isDeletion()) {
          Frames.writeEntry(out, e, versioned);
          count++;
        }
      }
      Frames.writeEnd(out, count);
      out.flush();
    }
  }

  private void changes(Call call) throws IOException {
    call.params(Set.of("start", "end", "after", "versions"));
    RingRange range = range(call);
    long after = HttpApi.parseNumber("after", call.required("after"));
    streamChanges(call, store.changes(range, after), versioned(call));
  }

  /** Whether the request asks for VERSIONED frames ({@code versions=1}); a client of before versions does not. */
  private static boolean versioned(Call call) {
    String v = call.query.get("versions");
    if (v == null || v.equals("0")) {
      return false;
    }
    if (!v.equals("1")) {
      throw new StoreException.BadRequest("versions=" + HttpApi.shorten(v) + " is not 0 or 1; give versions=1 for "
          + "versioned frames");
    }
    return true;
  }

  /**
   * {@code POST /v1/changes?after=N} with a body of ranges (16 bytes each: start and end, big-endian), the feed of
   * all of them in one pass over the log (docs/storage.md).
   */
  private void changesOfRanges(Call call) throws IOException {
    call.params(Set.of("after", "versions"));
    long after = HttpApi.parseNumber("after", call.required("after"));
    streamChanges(call, store.changesIn(readRanges(call.exchange.getRequestBody()), after), versioned(call));
  }

  private static List<RingRange> readRanges(InputStream body) throws IOException {
    byte[] bytes = body.readNBytes(Store.MAX_FEED_RANGES * HttpApi.RANGE_BYTES + 1);
    if (bytes.length == 0 || bytes.length % HttpApi.RANGE_BYTES != 0
        || bytes.length > Store.MAX_FEED_RANGES * HttpApi.RANGE_BYTES) {
      throw new StoreException.BadRequest("a ranges body of " + (bytes.length > Store.MAX_FEED_RANGES
          * HttpApi.RANGE_BYTES ? "more than " + Store.MAX_FEED_RANGES * HttpApi.RANGE_BYTES : bytes.length)
          + " bytes; it holds 1 to " + Store.MAX_FEED_RANGES + " ranges of " + HttpApi.RANGE_BYTES
          + " bytes each (start and end, big-endian)");
    }
    java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
    List<RingRange> ranges = new ArrayList<>(bytes.length / HttpApi.RANGE_BYTES);
    while (in.hasRemaining()) {
      ranges.add(RingRange.of(in.getLong(), in.getLong()));
    }
    return ranges;
  }

  private static void streamChanges(Call call, ChangeFeed opened, boolean versioned) throws IOException {
    try (ChangeFeed feed = opened) {
      DataOutputStream out = startStream(call, HttpApi.UP_TO_HEADER, feed.upTo());
      long count = 0;
      while (feed.hasNext()) {
        Change c = feed.next();
        Frames.writeChange(out, c, versioned);
        count++;
      }
      Frames.writeEnd(out, count);
      out.flush();
    }
  }

  private static DataOutputStream startStream(Call call, String header, long value) throws IOException {
    call.exchange.getResponseHeaders().set("Content-Type", HttpApi.FRAMES_TYPE);
    call.exchange.getResponseHeaders().set(header, Long.toString(value));
    call.exchange.sendResponseHeaders(200, 0);
    call.streaming = true;
    return new DataOutputStream(new BufferedOutputStream(call.exchange.getResponseBody(), STREAM_BUFFER));
  }

  private void apply(Call call) throws IOException {
    call.params(Set.of());
    List<Entry> entries = readEntries(call.exchange.getRequestBody());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("sequence", store.apply(entries));
    metrics.applied(entries.size());
    json(call.exchange, 200, body);
  }

  private void load(Call call) throws IOException {
    call.params(Set.of());
    LoadBody entries = new LoadBody(call.exchange.getRequestBody());
    LoadResult result;
    try {
      result = store.load(entries);
    } catch (java.io.UncheckedIOException e) {
      throw e.getCause(); // the body broke off (the worker gave the chunk up): the client went away
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("sequence", result.sequence());
    body.put("entries", result.entries());
    body.put("bytes", result.bytes());
    body.put("ingested", result.ingested());
    metrics.loaded(result);
    json(call.exchange, 200, body);
  }

  /**
   * The entries of a load body as the store reads them: ENTRY frames, then an END frame with their count. A body
   * that stops without END (the sender failed or gave up in the middle) fails the load, so a cut-off chunk is never
   * taken for a whole one.
   */
  private static final class LoadBody implements java.util.Iterator<Entry> {
    private final Frames.Reader reader;
    private Entry next;
    private long count;
    private boolean ended;

    LoadBody(InputStream body) {
      this.reader = new Frames.Reader(new BufferedInputStream(body, STREAM_BUFFER));
    }

    @Override
    public boolean hasNext() {
      if (next != null) {
        return true;
      }
      if (ended) {
        return false;
      }
      Frames.Frame frame;
      try {
        frame = reader.next();
      } catch (Frames.MalformedFrameException e) {
        throw new StoreException.BadRequest("load body: " + e.getMessage());
      } catch (IOException e) {
        throw new java.io.UncheckedIOException("reading a load body after entry " + count, e);
      }
      if (frame instanceof Frames.EntryFrame entryFrame) {
        next = entryFrame.entry();
        count++;
        return true;
      }
      if (frame instanceof Frames.EndFrame end) {
        if (end.count() != count) {
          throw new StoreException.BadRequest("load body: its END frame counts " + end.count() + " entries but "
              + count + " came before it; nothing was loaded");
        }
        ended = true;
        return false;
      }
      if (frame == null) {
        throw new StoreException.BadRequest("load body ended after " + count + " entries without its END frame: the "
            + "sender stopped in the middle; nothing was loaded");
      }
      throw new StoreException.BadRequest("load body frame " + count + " is " + frame.getClass().getSimpleName()
          + "; a load body holds ENTRY frames and one END frame");
    }

    @Override
    public Entry next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      Entry e = next;
      next = null;
      return e;
    }
  }

  /** Reads an apply body, holding the batch's limits as it goes so an oversized body is never all in memory. */
  private static List<Entry> readEntries(InputStream body) throws IOException {
    Frames.Reader reader = new Frames.Reader(new BufferedInputStream(body, STREAM_BUFFER));
    List<Entry> entries = new ArrayList<>();
    long bytes = 0;
    try {
      for (Frames.Frame frame = reader.next(); frame != null; frame = reader.next()) {
        if (!(frame instanceof Frames.EntryFrame entryFrame)) {
          throw new StoreException.BadRequest("apply body frame " + entries.size() + " is "
              + frame.getClass().getSimpleName() + "; an apply body holds ENTRY frames only");
        }
        if (entries.size() == Store.MAX_APPLY_ENTRIES) {
          throw Checks.applyTooMany("more than " + Store.MAX_APPLY_ENTRIES);
        }
        bytes += entryFrame.entry().size();
        if (bytes > Store.MAX_APPLY_BYTES) {
          throw Checks.applyTooLarge(entries.size(), bytes);
        }
        entries.add(entryFrame.entry());
      }
    } catch (Frames.MalformedFrameException e) {
      throw new StoreException.BadRequest("apply body: " + e.getMessage());
    }
    return entries;
  }

  private void digest(Call call) throws IOException {
    call.params(Set.of("start", "end"));
    RangeDigest d = store.digest(range(call));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("digest", HexFormat.of().formatHex(d.digest()));
    body.put("keys", d.keys());
    body.put("bytes", d.bytes());
    body.put("sequence", d.sequence());
    json(call.exchange, 200, body);
  }

  private void fences(Call call) throws IOException {
    call.params(Set.of());
    List<Object> list = new ArrayList<>();
    for (Fence f : store.fences()) {
      list.add(fence(f));
    }
    json(call.exchange, 200, Map.of("fences", list));
  }

  private void fence(Call call) throws IOException {
    call.params(Set.of("start", "end", "epoch"));
    RingRange range = range(call);
    long epoch = HttpApi.parseNumber("epoch", call.required("epoch"));
    json(call.exchange, 200, fence(store.fence(range, epoch)));
  }

  private void unfence(Call call) throws IOException {
    call.params(Set.of("start", "end", "epoch"));
    RingRange range = range(call);
    long epoch = HttpApi.parseNumber("epoch", call.required("epoch"));
    store.unfence(range, epoch);
    call.exchange.sendResponseHeaders(204, -1);
  }

  private void deleteRange(Call call) throws IOException {
    call.params(Set.of("start", "end", "epoch"));
    long epoch = HttpApi.parseNumber("epoch", call.required("epoch"));
    long deleted = store.deleteRange(range(call), epoch);
    metrics.rangeDeleted(deleted);
    json(call.exchange, 200, Map.of("deleted", deleted));
  }

  private static Map<String, Object> fence(Fence f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("start", HttpApi.position(f.range().start()));
    m.put("end", HttpApi.position(f.range().end()));
    m.put("epoch", f.epoch());
    m.put("position", f.position());
    return m;
  }

  private static RingRange range(Call call) {
    return RingRange.of(HttpApi.parsePosition("start", call.required("start")),
        HttpApi.parsePosition("end", call.required("end")));
  }

  // ---- bodies

  private static byte[] readValue(HttpExchange exchange) throws IOException {
    String declared = exchange.getRequestHeaders().getFirst("Content-Length");
    if (declared != null) {
      long length = HttpApi.parseNumber("Content-Length", declared.trim());
      if (length > Store.MAX_VALUE_BYTES) {
        throw Checks.valueTooLarge("value", Long.toString(length));
      }
    }
    byte[] value = exchange.getRequestBody().readNBytes(Store.MAX_VALUE_BYTES + 1);
    if (value.length > Store.MAX_VALUE_BYTES) {
      throw Checks.valueTooLarge("value", "more than " + Store.MAX_VALUE_BYTES);
    }
    return value;
  }

  /** Reads away what is left of a refused request's body (up to a bound), so the client reads our answer. */
  private static void drain(HttpExchange exchange) throws IOException {
    InputStream body = exchange.getRequestBody();
    long skipped = 0;
    byte[] sink = new byte[STREAM_BUFFER];
    for (int n = body.read(sink); n > 0 && skipped < DRAIN_LIMIT; n = body.read(sink)) {
      skipped += n;
    }
  }

  private static Map<String, Object> error(String code, String message) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("error", code);
    m.put("message", message);
    return m;
  }

  private static void json(HttpExchange exchange, int status, Map<String, Object> body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", HttpApi.JSON_TYPE);
    send(exchange, status, (Json.write(body) + "\n").getBytes(UTF_8));
  }

  private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      exchange.getResponseBody().write(body);
    }
  }

  private static Map<String, String> parseQuery(String raw) {
    Map<String, String> query = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return query;
    }
    for (String pair : raw.split("&", -1)) {
      int eq = pair.indexOf('=');
      String name;
      String value;
      try {
        name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), UTF_8);
        value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), UTF_8);
      } catch (IllegalArgumentException e) {
        throw new StoreException.BadRequest("query parameter '" + HttpApi.shorten(pair) + "' is not URL-encoded "
            + "properly: " + e.getMessage());
      }
      if (query.put(name, value) != null) {
        throw new StoreException.BadRequest("parameter '" + HttpApi.shorten(name) + "' is given twice");
      }
    }
    return query;
  }
}
