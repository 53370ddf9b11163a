package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link StreamConnection} against a fake node on a server socket: what it sends, and every answer it reads. */
class StreamConnectionTest {
  private ServerSocket server;
  private final AtomicReference<String> request = new AtomicReference<>();
  private final CountDownLatch testDone = new CountDownLatch(1);

  @BeforeEach
  void listen() throws IOException {
    server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
  }

  @AfterEach
  void stop() throws IOException {
    testDone.countDown();
    server.close();
  }

  /** Answers the next connection with {@code answer}, then holds it open until the test ends (or closes it). */
  private void answer(byte[] answer, boolean thenClose) {
    Thread node = new Thread(() -> {
      try (Socket s = server.accept()) {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(ISO_8859_1).endsWith("\r\n\r\n")) {
          int b = in.read();
          if (b < 0) {
            return;
          }
          head.write(b);
        }
        request.set(head.toString(ISO_8859_1));
        s.getOutputStream().write(answer);
        s.getOutputStream().flush();
        if (!thenClose) {
          testDone.await(30, TimeUnit.SECONDS);
        }
      } catch (IOException | InterruptedException e) {
        // the test's assertions say what went wrong
      }
    }, "fake-node");
    node.setDaemon(true);
    node.start();
  }

  private StreamConnection.Answer get(Duration timeout) throws IOException {
    return StreamConnection.get("127.0.0.1", server.getLocalPort(), "/v1/scan?start=00&end=ff",
        Map.of("Authorization", "Bearer s3cret"), timeout);
  }

  @Test
  void shouldSendAGetAndReadAChunkedAnswerWithExtensionsAndTrailers() throws IOException {
    answer(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nRingshift-Sequence: 42\r\nX-Twice: 1\r\nx-twice: 2\r\n"
        + "\r\n5\r\nhello\r\n1;name=value\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n").getBytes(ISO_8859_1),
        false);

    StreamConnection.Answer answer = get(Duration.ofSeconds(5));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.headers()).containsEntry("ringshift-sequence", "42").containsEntry("x-twice", "1");
    assertThat(new String(answer.body().readAllBytes(), ISO_8859_1)).isEqualTo("hello 0123456789");
    assertThat(answer.body().read()).as("after the last chunk").isEqualTo(-1);
    answer.body().close();
    assertThat(request.get()).startsWith("GET /v1/scan?start=00&end=ff HTTP/1.1\r\n")
        .contains("\r\nHost: 127.0.0.1:" + server.getLocalPort() + "\r\n", "\r\nConnection: close\r\n",
            "\r\nAuthorization: Bearer s3cret\r\n");
  }

  @Test
  void shouldReadAnAnswerOfAGivenLengthAfterAnInterimOne() throws IOException {
    answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 7\r\n\r\n{\"a\":1}".getBytes(
        ISO_8859_1), false);

    StreamConnection.Answer answer = get(Duration.ofSeconds(5));

    assertThat(answer.status()).isEqualTo(404);
    assertThat(new String(answer.body().readAllBytes(), ISO_8859_1)).isEqualTo("{\"a\":1}");
  }

  /** An error's body may run to the end of the connection; a 200 answer's may not: a cut would look like its end. */
  @Test
  void shouldReadAnErrorWithoutALengthToTheEndOfTheConnectionButRefuseSuchA200() throws IOException {
    answer("HTTP/1.0 500 Oops\r\n\r\nall of it".getBytes(ISO_8859_1), true);
    assertThat(new String(get(Duration.ofSeconds(5)).body().readAllBytes(), ISO_8859_1)).isEqualTo("all of it");

    answer("HTTP/1.0 200 OK\r\n\r\nall of it".getBytes(ISO_8859_1), true);
    assertThatThrownBy(() -> get(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
        .hasMessageContaining("says neither its length nor that it is chunked");
  }

  @Test
  void shouldRefuseANegativeLengthAndEndlessInterimAnswers() {
    answer("HTTP/1.1 404 No\r\nContent-Length: -5\r\n\r\n".getBytes(ISO_8859_1), false);
    assertThatThrownBy(() -> get(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
        .hasMessageContaining("Content-Length is not a length: -5");

    answer("HTTP/1.1 100 Continue\r\n\r\n".repeat(20).getBytes(ISO_8859_1), false);
    assertThatThrownBy(() -> get(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
        .hasMessageContaining("more than 10 interim (1xx) answers");
  }

  /** The timeout bounds all of the headers, not each read: a node that trickles them out is cut off. */
  @Test
  void shouldTimeOutANodeThatTricklesItsHeaders() {
    Thread node = new Thread(() -> {
      try (Socket s = server.accept()) {
        s.getInputStream().read(new byte[4096]);
        s.getOutputStream().write("HTTP/1.1 200 OK\r\n".getBytes(ISO_8859_1));
        for (int i = 0; i < 100 && !testDone.await(100, TimeUnit.MILLISECONDS); i++) {
          s.getOutputStream().write(("X-Slow-" + i + ": 1\r\n").getBytes(ISO_8859_1)); // within every read timeout
        }
      } catch (IOException | InterruptedException e) {
        // the client gave up
      }
    }, "trickling-node");
    node.setDaemon(true);
    node.start();
    long started = System.nanoTime();

    assertThatThrownBy(() -> get(Duration.ofMillis(500))).isInstanceOf(HttpTimeoutException.class)
        .hasMessageContaining("no answer within 500 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(400),
        Duration.ofSeconds(3));
  }

  /** A read takes what is buffered across chunks (a node's server sends 4 KiB chunks), not one chunk a call. */
  @Test
  void shouldReadAcrossChunksThatAreBuffered() throws IOException {
    answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n2\r\nij\r\n0\r\n\r\n"
        .getBytes(ISO_8859_1), false);
    InputStream body = get(Duration.ofSeconds(5)).body();
    byte[] into = new byte[100];

    int n = body.read(into, 0, into.length);

    assertThat(new String(into, 0, n, ISO_8859_1)).isEqualTo("abcdefghij");
    assertThat(body.read(into, 0, into.length)).isEqualTo(-1);
  }

  /** A connection that breaks inside the body is a broken connection, not a body that ends: never EOFException. */
  @Test
  void shouldFailABodyCutOffInsideAChunkOrBeforeItsLength() throws IOException {
    answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly six".getBytes(ISO_8859_1), true);
    InputStream chunked = get(Duration.ofSeconds(5)).body();
    assertThatThrownBy(chunked::readAllBytes).isInstanceOf(IOException.class).isNotInstanceOf(EOFException.class)
        .hasMessageContaining("ended inside a chunk");

    answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort".getBytes(ISO_8859_1), true);
    InputStream fixed = get(Duration.ofSeconds(5)).body();
    assertThatThrownBy(fixed::readAllBytes).isInstanceOf(IOException.class).isNotInstanceOf(EOFException.class)
        .hasMessageContaining("95 bytes before the answer's end");

    answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n".getBytes(ISO_8859_1), true);
    InputStream between = get(Duration.ofSeconds(5)).body();
    assertThatThrownBy(between::readAllBytes).isInstanceOf(IOException.class)
        .isNotInstanceOf(EOFException.class).hasMessageContaining("before a chunk's size");
  }

  @Test
  void shouldRefuseWhatIsNotAnHttpAnswer() {
    answer("SSH-2.0-OpenSSH\r\n\r\n".getBytes(ISO_8859_1), false);
    assertThatThrownBy(() -> get(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
        .hasMessageContaining("does not start with an HTTP/1.x status line: SSH-2.0-OpenSSH");
  }

  @Test
  void shouldRefuseAMalformedChunkSize() throws IOException {
    answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".getBytes(ISO_8859_1), false);
    InputStream body = get(Duration.ofSeconds(5)).body();
    assertThatThrownBy(body::read).isInstanceOf(IOException.class).hasMessageContaining("not hexadecimal");
  }

  @Test
  void shouldRefuseAHeaderLineOverItsLimit() {
    answer(("HTTP/1.1 200 OK\r\nX-Long: " + "x".repeat(9_000) + "\r\n\r\n").getBytes(ISO_8859_1), false);
    assertThatThrownBy(() -> get(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
        .hasMessageContaining("longer than 8192 bytes");
  }

  @Test
  void shouldTimeOutWaitingForTheHeadersAndSaySo() {
    answer(new byte[0], false); // reads the request, answers nothing, keeps the connection
    long started = System.nanoTime();
    assertThatThrownBy(() -> get(Duration.ofMillis(300))).isInstanceOf(HttpTimeoutException.class)
        .hasMessageContaining("no answer within 300 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void shouldBeRefusedWhereNobodyListens() throws IOException {
    int port = server.getLocalPort();
    server.close();
    assertThatThrownBy(() -> StreamConnection.get("127.0.0.1", port, "/", Map.of(), Duration.ofSeconds(2)))
        .isInstanceOf(ConnectException.class);
  }

  private static final java.util.concurrent.ScheduledExecutorService TIMER =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "test-timer");
        t.setDaemon(true);
        return t;
      });

  /** A node that reads a chunked request body to its end, then answers with what it read. */
  private void echoChunkedBody(AtomicReference<byte[]> received) {
    Thread node = new Thread(() -> {
      try (Socket s = server.accept()) {
        java.io.BufferedInputStream in = new java.io.BufferedInputStream(s.getInputStream());
        request.set(line(in) + "\n" + headerLines(in));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
          int size = Integer.parseInt(line(in), 16);
          if (size == 0) {
            line(in);
            break;
          }
          body.write(in.readNBytes(size));
          line(in);
        }
        received.set(body.toByteArray());
        String answer = "{\"bytes\":" + body.size() + "}";
        s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: " + answer.length() + "\r\n\r\n" + answer)
            .getBytes(ISO_8859_1));
      } catch (IOException e) {
        // the test's assertions say what went wrong
      }
    }, "fake-node");
    node.setDaemon(true);
    node.start();
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
  }

  private static String headerLines(InputStream in) throws IOException {
    StringBuilder headers = new StringBuilder();
    for (String l = line(in); !l.isEmpty(); l = line(in)) {
      headers.append(l).append('\n');
    }
    return headers.toString();
  }

  /** A body of 1 MB (four full chunks and a short one) arrives whole, and the answer is read to its end. */
  @Test
  void shouldPostAChunkedBodyAndReadTheWholeAnswer() throws IOException {
    AtomicReference<byte[]> received = new AtomicReference<>();
    echoChunkedBody(received);
    byte[] sent = new byte[1_000_000];
    new java.util.Random(3).nextBytes(sent);

    StreamConnection.Answer answer = StreamConnection.post("127.0.0.1", server.getLocalPort(), "/v1/load",
        Map.of("Content-Type", "application/x-ringshift-frames"), Duration.ofSeconds(5), Duration.ofSeconds(10),
        TIMER, out -> {
          out.write(sent, 0, 10);
          out.write(sent[10]);
          out.flush(); // sends nothing early
          out.write(sent, 11, sent.length - 11);
        });

    assertThat(answer.status()).isEqualTo(200);
    assertThat(new String(answer.body().readAllBytes(), ISO_8859_1)).isEqualTo("{\"bytes\":1000000}");
    assertThat(received.get()).isEqualTo(sent);
    assertThat(request.get()).startsWith("POST /v1/load HTTP/1.1\n")
        .contains("\nTransfer-Encoding: chunked\n", "\nConnection: close\n",
            "\nContent-Type: application/x-ringshift-frames\n");
  }

  /** What the body's writer throws ends the request; the node gets a body cut off, without its last chunk. */
  @Test
  void shouldEndThePostWithWhatTheWriterThrew() {
    AtomicReference<byte[]> received = new AtomicReference<>();
    echoChunkedBody(received);
    IOException failure = new IOException("the entries failed");

    assertThatThrownBy(() -> StreamConnection.post("127.0.0.1", server.getLocalPort(), "/v1/load", Map.of(),
        Duration.ofSeconds(5), Duration.ofSeconds(10), TIMER, out -> {
          out.write(new byte[300_000]);
          throw failure;
        })).isSameAs(failure);
  }

  /** A node that answers before it read the body and closes the connection: its answer, not a broken pipe. */
  @Test
  void shouldReadTheAnswerOfANodeThatRefusedTheBodyEarly() throws IOException {
    answer("HTTP/1.1 400 Bad Request\r\nContent-Length: 13\r\n\r\n{\"error\":\"x\"}".getBytes(ISO_8859_1), true);

    StreamConnection.Answer answer = StreamConnection.post("127.0.0.1", server.getLocalPort(), "/v1/load", Map.of(),
        Duration.ofSeconds(5), Duration.ofSeconds(10), TIMER, out -> {
          byte[] block = new byte[1 << 20];
          for (int i = 0; i < 64; i++) { // more than the socket buffers hold: a write fails once the node is gone
            out.write(block);
          }
        });

    assertThat(answer.status()).isEqualTo(400);
    assertThat(new String(answer.body().readAllBytes(), ISO_8859_1)).isEqualTo("{\"error\":\"x\"}");
  }

  /** The deadline bounds the whole exchange: a node that never answers is a timeout, not a hang. */
  @Test
  void shouldTimeOutAPostAtItsDeadline() {
    answer(new byte[0], false); // reads the request head, then nothing more
    long started = System.nanoTime();

    assertThatThrownBy(() -> StreamConnection.post("127.0.0.1", server.getLocalPort(), "/v1/load", Map.of(),
        Duration.ofSeconds(5), Duration.ofMillis(500), TIMER, out -> out.write(new byte[100])))
        .isInstanceOf(HttpTimeoutException.class).hasMessageContaining("no answer within 500 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(400),
        Duration.ofSeconds(5));
  }

  /** A body's writer that is still writing when the deadline passed fails at its next write, not a chunk later. */
  @Test
  void shouldFailAWriterThatOutlivesTheDeadline() {
    echoChunkedBody(new AtomicReference<>());
    AtomicReference<Integer> writesAfter = new AtomicReference<>(0);

    assertThatThrownBy(() -> StreamConnection.post("127.0.0.1", server.getLocalPort(), "/v1/load", Map.of(),
        Duration.ofSeconds(5), Duration.ofMillis(300), TIMER, out -> {
          out.write(new byte[10]);
          try {
            assertThat(new CountDownLatch(1).await(600, TimeUnit.MILLISECONDS)).isFalse(); // past the deadline
          } catch (InterruptedException e) {
            throw new IOException(e);
          }
          out.write(new byte[10]);
          writesAfter.set(1);
        })).isInstanceOf(HttpTimeoutException.class).hasMessageContaining("no answer within 300 ms");
    assertThat(writesAfter.get()).as("the write after the deadline failed").isZero();
  }

  /** Closing the body from another thread wakes a read blocked on the socket: the watchdog and close need it. */
  @Test
  void shouldWakeABlockedReadWhenTheBodyIsClosedFromAnotherThread() throws Exception {
    answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(ISO_8859_1), false);
    InputStream body = get(Duration.ofSeconds(5)).body();
    CompletableFuture<Throwable> read = CompletableFuture.supplyAsync(() -> {
      try {
        body.read(new byte[100]);
        return null;
      } catch (IOException e) {
        return e;
      }
    });
    assertThat(read).as("the read waits for data that never comes").isNotCompleted();

    body.close();

    assertThat(read.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
  }
}
