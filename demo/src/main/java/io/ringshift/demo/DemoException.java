package io.ringshift.demo;

/**
 * The demo could not go on: a step did not happen within its time (a change not planned or not published, cleanups
 * still running), a change was refused, or Kafka or a node failed in a way the scenario does not expect. The message
 * names the step and the reason. Not retriable as such: run the demo again (with the printed seed to replay it).
 */
public final class DemoException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DemoException(String message) {
    super(message);
  }

  public DemoException(String message, Throwable cause) {
    super(message, cause);
  }
}
