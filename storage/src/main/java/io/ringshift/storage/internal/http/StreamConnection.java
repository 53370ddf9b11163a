package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 request on a connection of its own, without the JDK's HTTP client: a GET whose answer is read as a
 * stream (what a node client reads a scan with) and a POST whose body is written as a stream (a bulk load).
 *
 * <p>Design note. A copy's scan streams hundreds of MB through the worker, and in a profile of a copy between node
 * processes the JDK client's read path was the worker's largest cost: its selector thread reads the socket into a
 * fresh, zeroed 256 KiB heap buffer, hands it to a worker thread, which hands it to the body's reader on a third
 * thread; a load's body took the same way back (a publisher pulling 256 KiB arrays from an input stream adapter).
 * Here the reading thread reads the socket itself, into one buffer it keeps, and a load's writer writes its chunks
 * to the socket itself. The connection is not pooled: a scan is opened once per copy (or per resume), a load once
 * per 32 MiB, and the request says {@code Connection: close}. Closing a GET's body, from any thread, closes the
 * socket, which wakes a read blocked on it with an IOException, as the stream watchdog and a client's close need.
 * The timeout bounds all of a GET's answer headers; the body of a 200 answer has no time limit (the client's
 * watchdog bounds how long a read of it may wait). A POST's whole exchange is bounded by its deadline.
 *
 * <p>Only what a node sends is read: a status line, headers, and a body of {@code Content-Length} bytes or chunked
 * (an error's body may also run to the end of the connection). Header lines over 8 KiB or over 100 headers are
 * refused.
 */
final class StreamConnection {
  /** The socket read buffer, the same size as the JDK client's buffers are set to. */
  private static final int BUFFER_BYTES = 256 * 1024;
  private static final int MAX_LINE = 8 * 1024;
  private static final int MAX_HEADERS = 100;
  private static final int MAX_INTERIM = 10;
  /** The most of a POST's answer read (a load's answer is a small JSON object, an error's a message). */
  private static final int MAX_ANSWER_BYTES = 1 << 20;

  private StreamConnection() {}

  /** An answer's status, its headers (names in lower case, the first of each) and its body. */
  record Answer(int status, Map<String, String> headers, InputStream body) {}

  /**
   * Sends {@code GET target} to {@code host:port} with {@code headers} and returns the answer once its headers
   * arrived.
   *
   * @throws HttpConnectTimeoutException when no connection was made within {@code timeout}
   * @throws HttpTimeoutException when the answer's headers did not arrive within {@code timeout} of the request
   * @throws java.net.ConnectException when the connection was refused
   * @throws IOException when the connection broke or the answer is not HTTP
   */
  static Answer get(String host, int port, String target, Map<String, String> headers, Duration timeout)
      throws IOException {
    int millis = millis(timeout);
    Socket socket = connect(host, port, millis);
    try {
      OutputStream out = socket.getOutputStream();
      out.write(head("GET", host, port, target, headers, false).getBytes(ISO_8859_1));
      out.flush();
      return answer(socket, millis);
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  /** Writes a request body; what it throws ends the request, and the connection is closed. */
  @FunctionalInterface
  interface BodyWriter {
    void writeTo(OutputStream body) throws IOException;
  }

  /**
   * Sends {@code POST target} with a chunked body that {@code body} writes, and returns the answer, its body read
   * (up to 1 MiB) and the connection closed: the node answers after it read the whole body. {@code timeout}
   * bounds the connect; {@code deadline} the rest of the exchange, from the connection made to the answer's body
   * read ({@code timer} closes the connection then, and the body's next write fails).
   * A node that answers before it read the whole body (it refused what it read) and closes the connection makes
   * the body's write fail; its answer is then read if it arrived, else the write's error is thrown.
   *
   * @throws HttpTimeoutException when the deadline passed
   * @throws IOException as {@link #get}, or what {@code body} threw
   */
  static Answer post(String host, int port, String target, Map<String, String> headers, Duration timeout,
      Duration deadline, java.util.concurrent.ScheduledExecutorService timer, BodyWriter body) throws IOException {
    Socket socket = connect(host, port, millis(timeout));
    java.util.concurrent.atomic.AtomicBoolean late = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.ScheduledFuture<?> expiry = null;
    try {
      expiry = timer.schedule(() -> {
        late.set(true);
        try {
          socket.close();
        } catch (IOException e) {
          // closing: nothing to do about it
        }
      }, deadline.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
      socket.setSoTimeout(0); // the deadline bounds it
      OutputStream raw = socket.getOutputStream();
      ChunkedOutput out = new ChunkedOutput(raw, late, deadline);
      try {
        raw.write(head("POST", host, port, target, headers, true).getBytes(ISO_8859_1));
        body.writeTo(out);
        out.finish();
      } catch (IOException e) {
        if (late.get()) {
          throw withCause(new HttpTimeoutException("no answer within " + deadline.toMillis() + " ms"), e);
        }
        if (out.failedOnSocket) {
          return earlyAnswer(socket, e); // the node may have answered and closed: its answer says why
        }
        throw e;
      }
      try {
        return whole(answer(socket, 0));
      } catch (IOException e) {
        if (late.get()) {
          throw withCause(new HttpTimeoutException("no answer within " + deadline.toMillis() + " ms"), e);
        }
        throw e;
      }
    } finally {
      if (expiry != null) {
        expiry.cancel(false);
      }
      socket.close(); // the answer returned was read whole
    }
  }

  /** The answer a node sent before it stopped reading the body, if it is there within a second; else {@code e}. */
  private static Answer earlyAnswer(Socket socket, IOException e) throws IOException {
    try {
      socket.shutdownOutput();
    } catch (IOException ignored) {
      // the connection may be gone already
    }
    try {
      return whole(answer(socket, 1_000));
    } catch (IOException | RuntimeException none) {
      e.addSuppressed(none);
      throw e;
    }
  }

  /** The answer with its body read (up to {@link #MAX_ANSWER_BYTES}) and the connection closed. */
  private static Answer whole(Answer answer) throws IOException {
    try (InputStream body = answer.body()) {
      return new Answer(answer.status(), answer.headers(),
          new java.io.ByteArrayInputStream(body.readNBytes(MAX_ANSWER_BYTES)));
    }
  }

  private static int millis(Duration timeout) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
  }

  private static Socket connect(String host, int port, int millis) throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      try {
        socket.connect(new InetSocketAddress(host, port), millis);
      } catch (SocketTimeoutException e) {
        throw withCause(new HttpConnectTimeoutException("no connection within " + millis + " ms"), e);
      } catch (java.net.ConnectException e) {
        throw e;
      } catch (IOException e) {
        // As the JDK client: every failure to connect (unknown host, no route) is a ConnectException, not retried.
        throw withCause(new java.net.ConnectException(e.toString()), e);
      }
      return socket;
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  /** The request line and headers, ending with the empty line; {@code chunked}: a chunked body follows. */
  private static String head(String method, String host, int port, String target, Map<String, String> headers,
      boolean chunked) {
    StringBuilder request = new StringBuilder(256).append(method).append(' ').append(target).append(" HTTP/1.1\r\n")
        .append("Host: ").append(host.indexOf(':') >= 0 ? "[" + host + "]" : host).append(':').append(port)
        .append("\r\n")
        .append("Connection: close\r\n");
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (h.getValue().indexOf('\r') >= 0 || h.getValue().indexOf('\n') >= 0) {
        throw new IllegalArgumentException("header " + h.getKey() + " holds a line break");
      }
      request.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
    }
    if (chunked) {
      request.append("Transfer-Encoding: chunked\r\n");
    }
    return request.append("\r\n").toString();
  }

  /**
   * Reads the answer's status and headers, all of them within {@code millis} (0: no limit), and returns it with its
   * body, which the socket's close ends. The body of a 200 answer has no time limit (a scan's reader bounds its
   * reads itself); any other answer's body, an error message, must arrive within {@code millis} more. A 200
   * answer must say how its body ends (chunked or a length): one read to the end of the connection could not tell a
   * cut-off stream from a whole one.
   */
  private static Answer answer(Socket socket, int millis) throws IOException {
    Input in = new Input(socket);
    in.deadline(millis);
    int status;
    Map<String, String> answerHeaders;
    int interim = 0;
    try {
      do {
        if (interim++ > MAX_INTERIM) {
          throw new IOException("the answer has more than " + MAX_INTERIM + " interim (1xx) answers");
        }
        status = statusOf(in.line());
        answerHeaders = headers(in);
      } while (status >= 100 && status < 200); // an interim answer: the real one follows
    } catch (SocketTimeoutException e) {
      throw withCause(new HttpTimeoutException("no answer within " + millis + " ms"), e);
    }
    in.deadline(status == 200 ? 0 : millis);
    InputStream body;
    if ("chunked".equalsIgnoreCase(answerHeaders.get("transfer-encoding"))) {
      body = new ChunkedBody(in);
    } else if (answerHeaders.containsKey("content-length")) {
      long length;
      try {
        length = Long.parseLong(answerHeaders.get("content-length").trim());
      } catch (NumberFormatException e) {
        length = -1;
      }
      if (length < 0) {
        throw new IOException("the answer's Content-Length is not a length: " + answerHeaders.get("content-length"));
      }
      body = new FixedBody(in, length);
    } else if (status == 200) {
      throw new IOException("the answer (200) says neither its length nor that it is chunked");
    } else {
      body = new FixedBody(in, Long.MAX_VALUE);
    }
    return new Answer(status, answerHeaders, body);
  }

  private static <E extends IOException> E withCause(E e, Throwable cause) {
    e.initCause(cause);
    return e;
  }

  private static int statusOf(String line) throws IOException {
    // HTTP/1.1 200 OK
    if (!line.startsWith("HTTP/1.") || line.length() < 12 || line.charAt(8) != ' ') {
      throw new IOException("the answer does not start with an HTTP/1.x status line: " + printable(line));
    }
    try {
      return Integer.parseInt(line.substring(9, 12));
    } catch (NumberFormatException e) {
      throw new IOException("the answer's status is not a number: " + printable(line));
    }
  }

  private static Map<String, String> headers(Input in) throws IOException {
    Map<String, String> headers = new HashMap<>();
    for (int n = 0; ; n++) {
      String line = in.line();
      if (line.isEmpty()) {
        return headers;
      }
      if (n == MAX_HEADERS) {
        throw new IOException("the answer has more than " + MAX_HEADERS + " headers");
      }
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException("the answer has a malformed header line: " + printable(line));
      }
      headers.putIfAbsent(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
    }
  }

  private static String printable(String line) {
    String cut = line.length() > 80 ? line.substring(0, 80) + "..." : line;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }

  /** The socket's input through one buffer; closing it closes the socket. */
  private static final class Input {
    private final Socket socket;
    private final InputStream in;
    private final byte[] buffer = new byte[BUFFER_BYTES];
    private int at;
    private int limit;
    /** When reads must be done by (System.nanoTime), or 0 for no limit. */
    private long deadline;

    Input(Socket socket) throws IOException {
      this.socket = socket;
      this.in = socket.getInputStream();
    }

    /** Every read from now on ends within {@code millis} (0: no limit). */
    void deadline(int millis) throws IOException {
      deadline = millis == 0 ? 0 : System.nanoTime() + millis * 1_000_000L;
      if (millis == 0) {
        socket.setSoTimeout(0);
      }
    }

    /** Reads more; false at the end of the connection. */
    private boolean fill() throws IOException {
      if (deadline != 0) {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
          throw new SocketTimeoutException("the deadline passed");
        }
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
      }
      return fillNow();
    }

    private boolean fillNow() throws IOException {
      int n = in.read(buffer, 0, buffer.length);
      if (n < 0) {
        return false;
      }
      at = 0;
      limit = n;
      return true;
    }

    /** A line ending in CRLF (or LF), without it; at most {@link #MAX_LINE} bytes. */
    String line() throws IOException {
      StringBuilder line = new StringBuilder();
      while (true) {
        if (at == limit && !fill()) {
          throw new IOException("the connection ended inside a line");
        }
        int start = at;
        while (at < limit && buffer[at] != '\n') {
          at++;
        }
        line.append(new String(buffer, start, at - start, ISO_8859_1));
        if (line.length() > MAX_LINE) {
          throw new IOException("a line of the answer is longer than " + MAX_LINE + " bytes");
        }
        if (at < limit) {
          at++; // the LF
          int end = line.length();
          if (end > 0 && line.charAt(end - 1) == '\r') {
            line.setLength(end - 1);
          }
          return line.toString();
        }
      }
    }

    /** Bytes read from the socket and not yet taken. */
    int buffered() {
      return limit - at;
    }

    /** Whether the buffer holds a whole line after the next {@code skip} bytes (so reading it cannot block). */
    boolean holdsLine(int skip) {
      for (int i = at + skip; i < limit; i++) {
        if (buffer[i] == '\n') {
          return true;
        }
      }
      return false;
    }

    /** The next byte; -1 at the end of the connection. */
    int read() throws IOException {
      if (at == limit && !fill()) {
        return -1;
      }
      return buffer[at++] & 0xFF;
    }

    /** Up to {@code len} bytes into {@code b}; -1 at the end of the connection. */
    int read(byte[] b, int off, int len) throws IOException {
      if (at == limit) {
        if (len >= buffer.length && deadline == 0) {
          return in.read(b, off, len); // a large read goes straight from the socket
        }
        if (!fill()) {
          return -1;
        }
      }
      int n = Math.min(len, limit - at);
      System.arraycopy(buffer, at, b, off, n);
      at += n;
      return n;
    }

    void close() throws IOException {
      socket.close();
    }
  }

  /**
   * A request body in chunks of up to 256 KiB, each written to the socket with one call: its size line, its bytes
   * and CRLF in one buffer.
   */
  private static final class ChunkedOutput extends OutputStream {
    /** Room for the size line (up to 8 hex digits and CRLF) before the data. */
    private static final int HEAD = 10;
    private final OutputStream socket;
    private final java.util.concurrent.atomic.AtomicBoolean late;
    private final Duration deadline;
    private final byte[] buffer = new byte[HEAD + BUFFER_BYTES + 2];
    private int size;
    /** The socket refused a write (the node closed the connection), as opposed to the body's writer failing. */
    boolean failedOnSocket;

    ChunkedOutput(OutputStream socket, java.util.concurrent.atomic.AtomicBoolean late, Duration deadline) {
      this.socket = socket;
      this.late = late;
      this.deadline = deadline;
    }

    /** Fails the body's writer as soon as the deadline passed, not only at the next full chunk. */
    private void checkDeadline() throws HttpTimeoutException {
      if (late.get()) {
        throw new HttpTimeoutException("no answer within " + deadline.toMillis() + " ms");
      }
    }

    @Override
    public void write(int b) throws IOException {
      if (size == BUFFER_BYTES) {
        flushChunk();
      }
      buffer[HEAD + size++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      checkDeadline();
      while (len > 0) {
        if (size == BUFFER_BYTES) {
          flushChunk();
        }
        int n = Math.min(len, BUFFER_BYTES - size);
        System.arraycopy(b, off, buffer, HEAD + size, n);
        size += n;
        off += n;
        len -= n;
      }
    }

    private void flushChunk() throws IOException {
      checkDeadline();
      if (size == 0) {
        return;
      }
      byte[] line = (Integer.toHexString(size) + "\r\n").getBytes(ISO_8859_1);
      int start = HEAD - line.length;
      System.arraycopy(line, 0, buffer, start, line.length);
      buffer[HEAD + size] = '\r';
      buffer[HEAD + size + 1] = '\n';
      try {
        socket.write(buffer, start, line.length + size + 2);
      } catch (IOException e) {
        failedOnSocket = true;
        throw e;
      }
      size = 0;
    }

    /** Sends what is left and the last, empty chunk. */
    void finish() throws IOException {
      flushChunk();
      try {
        socket.write("0\r\n\r\n".getBytes(ISO_8859_1));
        socket.flush();
      } catch (IOException e) {
        failedOnSocket = true;
        throw e;
      }
    }

    /** Writes what is buffered; a flush of the body sends nothing early (chunks are sent when full). */
    @Override
    public void flush() {
      // Chunks go out when full and at finish(): a writer's flush (DataOutputStream's) must not send tiny chunks.
    }
  }

  // A connection that ends inside the body is an IOException, never an EOFException: a frame reader takes that for
  // frames cut short by the sender (malformed), while this is a broken connection (the node is unavailable).

  /** An answer's body over the connection's input: reads of one byte go through {@link #read(byte[], int, int)}. */
  private abstract static class Body extends InputStream {
    final Input in;

    Body(Input in) {
      this.in = in;
    }

    private final byte[] one = new byte[1];

    @Override
    public int read() throws IOException {
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
    }

    /** Closes the connection; a read blocked on it, in another thread, fails with an IOException. */
    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** A body of a known length (or up to the end of the connection). */
  private static final class FixedBody extends Body {
    private long remaining;

    FixedBody(Input in, long length) {
      super(in);
      this.remaining = length;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (remaining == 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, remaining));
      if (n < 0) {
        if (remaining != Long.MAX_VALUE) {
          throw new IOException("the connection ended " + remaining + " bytes before the answer's end");
        }
        remaining = 0;
        return -1;
      }
      if (remaining != Long.MAX_VALUE) {
        remaining -= n;
      }
      return n;
    }
  }

  /** A chunked body: each chunk's size line, its bytes, CRLF; a chunk of size 0 and the trailers end it. */
  private static final class ChunkedBody extends Body {
    private long chunkLeft;
    /** A chunk's data was read and its CRLF not yet. */
    private boolean afterChunk;
    /** The last, empty chunk's size line was read and its trailers not yet. */
    private boolean lastChunk;
    private boolean ended;

    ChunkedBody(Input in) {
      super(in);
    }

    /**
     * Reads on across chunks (a node's server sends 4 KiB chunks) as long as what it needs is already buffered:
     * with bytes in hand it never waits on the socket, so a stream that stalls still gives up what arrived.
     */
    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      int total = 0;
      while (total < len) {
        if (chunkLeft == 0) {
          if (ended) {
            break;
          }
          if (lastChunk) { // its trailers: read only with no bytes in hand, as reading them may wait
            if (total > 0) {
              break;
            }
            while (!in.line().isEmpty()) {
              // trailers: none are used
            }
            ended = true;
            break;
          }
          if (total > 0 && !in.holdsLine(afterChunk ? 2 : 0)) {
            break;
          }
          if (afterChunk) {
            if (in.read() != '\r' || in.read() != '\n') {
              throw new IOException("a chunk of the answer does not end with CRLF");
            }
            afterChunk = false;
          }
          chunkLeft = chunkSize();
          if (chunkLeft == 0) {
            lastChunk = true;
            continue;
          }
        }
        if (total > 0 && in.buffered() == 0) {
          break;
        }
        int n = in.read(b, off + total, (int) Math.min(len - total, chunkLeft));
        if (n < 0) {
          throw new IOException("the connection ended inside a chunk of the answer");
        }
        total += n;
        chunkLeft -= n;
        afterChunk = chunkLeft == 0;
      }
      return total == 0 ? -1 : total;
    }

    /** Reads a chunk's size line (hexadecimal digits, then extensions, which are ignored, up to CRLF). */
    private long chunkSize() throws IOException {
      long size = 0;
      int digits = 0;
      int c;
      while ((c = in.read()) >= 0) {
        int digit = Character.digit(c, 16);
        if (digit < 0) {
          break;
        }
        if (++digits > 15) {
          throw new IOException("a chunk size of the answer has more than 15 hexadecimal digits");
        }
        size = size * 16 + digit;
      }
      if (digits == 0) {
        throw new IOException(c < 0 ? "the connection ended before a chunk's size"
            : "a chunk size of the answer is not hexadecimal (byte " + c + ")");
      }
      for (int n = digits; c != '\n'; n++) { // the rest of the line: extensions, CR
        if (c < 0) {
          throw new IOException("the connection ended inside a chunk's size line");
        }
        if (n > MAX_LINE) {
          throw new IOException("a chunk size line of the answer is longer than " + MAX_LINE + " bytes");
        }
        c = in.read();
      }
      return size;
    }
  }
}
