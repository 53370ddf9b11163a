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

  @Test
  void shouldReadAnAnswerWithoutALengthToTheEndOfTheConnection() throws IOException {
    answer("HTTP/1.0 200 OK\r\n\r\nall of it".getBytes(ISO_8859_1), true);

    assertThat(new String(get(Duration.ofSeconds(5)).body().readAllBytes(), ISO_8859_1)).isEqualTo("all of it");
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
